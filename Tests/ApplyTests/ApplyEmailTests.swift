import Apply
import Basics
import Foundation
import Ledger
import TestSupport
import Testing

/// `handover apply --set email=COLUMN` on the demo's team B ledger, after a run that set the
/// `sub` alone: what an operator relies on, through the command line, on SQLite and PostgreSQL.
@Suite("apply sets the relay address beside the sub")
struct ApplyEmailTests {
    static let subOnly = ["recipient_sub=apple_sub"]
    static let both = ["recipient_sub=apple_sub", "email=email"]

    @Test(
        "SQLite: after a sub-only run, a plan with the email changes no byte and names the collision and the kept addresses; the commit sets exactly the relay addresses it may; a second commit records nothing; the undo leaves every row as it was"
    )
    func sqlite() throws {
        let s = try EmailSetup()
        try Self.scenario(s, try s.sqlite())
    }

    @Test(
        "PostgreSQL: the same run, plan, commit, second commit and undo as on SQLite",
        .enabled(if: PostgresTestDatabase.isAvailable, "needs the throwaway cluster tools/test starts"))
    func postgres() throws {
        let s = try EmailSetup()
        let table = PostgresAppTable(database: try PostgresTestDatabase())
        try s.fill(table)
        try Self.scenario(s, table)
    }

    /// The run of the sub alone, then the email's plan, commit, second commit and undo.
    static func scenario(_ s: EmailSetup, _ table: AppTable) throws {
        func apply(_ set: [String], _ extra: String...) throws -> (status: Int32, out: String, err: String) {
            try runProduct("handover", s.options(table, set: set) + extra, environment: table.environment)
        }
        let subRun = try apply(Self.subOnly, "--commit")
        #expect(subRun.status == 1, "the sign-in race's collision waits for a person: \(subRun.out)\(subRun.err)")
        let before = try table.dump()
        let fingerprint = try table.fingerprint()
        let events = try handover("query", "events", "--ledger", s.ledger, "--format", "csv").out

        // The plan: nothing written, the sub done already, the collision and the kept addresses named.
        let plan = try apply(Self.both)
        #expect(plan.status == 0, "\(plan.err)")
        #expect(try table.fingerprint() == fingerprint, "a plan writes nothing to the app's database")
        #expect(try handover("query", "events", "--ledger", s.ledger, "--format", "csv").out == events, "nor to the ledger")
        // Each relay address of team B's goes over a relay address or NULL; over an address of
        // the user's own (the two given since, and any the user shared with team A), never.
        let replaceable = { (account: String) in (before[account]?[2] ?? nil).map(ApplyColumn.isRelayAddress) ?? true }
        let settable = s.relay.filter { replaceable($0.account) && $0.account != s.victim }
        let kept = s.relay.map(\.account).filter { !replaceable($0) }
        #expect(Set(s.own).isSubset(of: kept))
        #expect(plan.out.contains("change              0  \(String(settable.count).leftPadded(5))  take the new value"), "\(plan.out)")
        #expect(plan.out.contains("kept                -  \(String(kept.count).leftPadded(5))  hold an address of the user's own"), "\(plan.out)")
        #expect(
            plan.out.contains("  account \(s.victim) (new email \(s.address(of: s.victim))): account dup-2 holds this relay address already"),
            "\(plan.out)")
        #expect(plan.out.contains("Kept (an address of the user's own, never overwritten): \(kept.sorted().joined(separator: ", "))"), "\(plan.out)")
        #expect(plan.out.contains("Relay addresses that stay team A's (mail to them stops reaching the user): "), "\(plan.out)")

        // The commit: exactly the relay addresses the rules allow.
        let commit = try apply(Self.both, "--commit", "--batch-size", "40")
        #expect(commit.status == 1, "a collision waits for a person: \(commit.err)")
        #expect(commit.out.contains("email applied \(settable.count), collision 1, kept \(kept.count)."), "\(commit.out)")
        let runID = try EmailSetup.runID(of: commit.out)
        var expected = before
        for (account, address) in settable { expected[account]?[2] = address }
        let after = try table.dump()
        #expect(
            Self.differences(after, expected).isEmpty,
            "exactly the accounts whose email held a relay address or NULL: \(Self.differences(after, expected))")
        let state = Dictionary(
            uniqueKeysWithValues: try EmailSetup.state(s.ledger).compactMap { row in row["account_id"]?.stringValue.map { ($0, row) } })
        for (account, _) in settable { #expect(state[account]?["email_apply_outcome"]?.stringValue == "applied", "\(account)") }
        for account in kept { #expect(state[account]?["email_apply_outcome"]?.stringValue == "kept", "\(account)") }
        #expect(state[s.victim]?["email_apply_outcome"]?.stringValue == "collision")
        #expect(try !filesContain(s.ledger, "@example.org"), "a kept address is recorded as an outcome only")
        let person = settable[0]
        let shown = try handover("query", "user", person.account, "--ledger", s.ledger).out
        #expect(shown.contains("email applied, \(before[person.account]?[2] ?? "NULL") → \(person.address) (intended in event "), "\(shown)")
        let report = try handover("report", "--ledger", s.ledger).out
        #expect(report.contains("relay addresses set on the accounts") && report.contains("kept (the user's own address)"), "\(report)")

        // Again: nothing new, nothing recorded.
        let recorded = try handover("query", "events", "--ledger", s.ledger, "--format", "csv").out
        let again = try apply(Self.both, "--commit")
        #expect(again.status == 0 && again.out.contains("Nothing new to write or record"), "\(again.out)\(again.err)")
        #expect(try handover("query", "events", "--ledger", s.ledger, "--format", "csv").out == recorded, "a second run records nothing")
        #expect(Self.differences(try table.dump(), expected).isEmpty)

        // The undo: every row as it was before the run.
        let undo = try apply(Self.both, "--undo", runID, "--commit")
        #expect(undo.status == 0 && undo.out.contains("email undone \(settable.count)."), "\(undo.out)\(undo.err)")
        let undone = try table.dump()
        #expect(Self.differences(undone, before).isEmpty, "every address as it was: \(Self.differences(undone, before))")
        let verify = try handover("verify", "--deep", "--ledger", s.ledger)
        #expect(verify.status == 0, "\(verify.out)\(verify.err)")
    }

    @Test(
        "a person's bundle after apply proves their email change by the batch's rows, the addresses sealed (opened in revealed/ alone); an altered old or new address is refused by both checks; no other person's address is in it"
    )
    func bundle() throws {
        let s = try EmailSetup()
        let table = try s.sqlite()
        let before = try table.dump()
        #expect(try handover(s.options(table, set: ApplyEmailTests.both) + ["--commit"]).status == 1)
        let person = try s.person(before: before)
        #expect(try handover("checkpoint", "--ledger", s.ledger).status == 0)
        let bundle = s.dir.sub("bundle")
        let written = try handover("evidence", person.account, "--ledger", s.ledger, "--out", bundle, "--reveal")
        try #require(written.status == 0, "\(written.out)\(written.err)")
        let story = try handover("evidence", "verify", bundle)
        #expect(story.status == 0, "\(story.err)")
        let old = try #require(before[person.account]?[2] ?? nil)
        #expect(
            story.out.contains("  proven  apply run ") && story.out.contains("email change, \(old) → \(person.address) (row ")
                && story.out.contains("addresses as revealed/rows/"), "\(story.out)")
        #expect(story.out.contains("settled for account_id \(person.account): recipient_sub applied; email applied (row "), "\(story.out)")
        let checked = try Self.pythonCheck(bundle)
        #expect(checked.status == 0, "check-bundle.py: \(checked.out)\(checked.err)")
        // The addresses are sealed wherever they are evidence; in clear only in revealed/.
        #expect(try !filesContain(bundle + "/rows", "@") && !filesContain(bundle + "/events", person.address))
        #expect(try filesContain(bundle + "/revealed/rows", person.address))
        // No other person's address, of either team.
        for (account, row) in before where account != person.account {
            if let address = row[2] ?? nil { #expect(try !filesContain(bundle, address), "\(account)'s address is in \(person.account)'s bundle") }
        }
        for (account, address) in s.relay where account != person.account {
            #expect(try !filesContain(bundle, address), "\(account)'s new address is in \(person.account)'s bundle")
        }

        // The sealed old or new address altered, in the intent's row: refused, exit 4.
        let intended = try FileManager.default.contentsOfDirectory(atPath: bundle + "/rows").compactMap { name -> String? in
            let file = bundle + "/rows/" + name
            let json = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
            return json["kind"]?.stringValue == "handover-apply-intended-row/v1" && json["row"]?.stringValue?.contains("\"email\"") == true
                ? file : nil
        }.first
        let intent = try #require(intended)
        for value in ["old", "new"] {
            let copy = s.dir.sub("altered-\(value)")
            #expect(try runCommand("/bin/cp", ["-a", bundle, copy]).status == 0)
            let file = copy + intent.dropFirst(bundle.count)
            var proof = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: file)))).objectValue!
            var line = try JSONValue.parse(Array(proof["row"]!.stringValue!.utf8)).objectValue!
            var email = line["email"]!.objectValue!
            var sealed = email[value]!.objectValue!
            let ct = Array(Data(base64Encoded: sealed["ct"]!.stringValue!)!)
            sealed["ct"] = .string(Data(ct.dropLast() + [ct.last! ^ 1]).base64EncodedString())
            email[value] = .object(sealed)
            line["email"] = .object(email)
            proof["row"] = .string(String(decoding: JSONValue.object(line).canonicalBytes, as: UTF8.self))
            try Data(JSONValue.object(proof).canonicalBytes + [0x0A]).write(to: URL(fileURLWithPath: file))
            let refused = try handover("evidence", "verify", copy)
            #expect(refused.status == 4 && refused.err.contains("lead to the rows_root"), "\(value): \(refused.out)\(refused.err)")
            #expect(try Self.pythonCheck(copy).status == 1, "\(value): check-bundle.py")
        }
    }

    @Test(
        "an undo after a user's erasure restores every other value, names the erased user whose addresses no longer open, and leaves their address as the run set it"
    )
    func undoAfterErasure() throws {
        let s = try EmailSetup()
        let table = try s.sqlite()
        let before = try table.dump()
        let commit = try handover(s.options(table, set: Self.both) + ["--commit"])
        #expect(commit.status == 1, "\(commit.out)\(commit.err)")
        let runID = try EmailSetup.runID(of: commit.out)
        let person = try s.person(before: before)
        #expect(try handover("erase", person.account, "--ledger", s.ledger).status == 0)
        let plan = try handover(s.options(table, set: Self.both) + ["--undo", runID])
        #expect(
            plan.out.contains("Email not restored (the user was erased since; their addresses cannot be opened): \(person.account)\n"), "\(plan.out)")
        let undo = try handover(s.options(table, set: Self.both) + ["--undo", runID, "--commit"])
        #expect(
            undo.status == 0
                && undo.out.contains("Email not restored (the user was erased since; their addresses cannot be opened): \(person.account)\n"),
            "\(undo.out)\(undo.err)")
        var expected = before
        expected[person.account]?[2] = person.address
        let after = try table.dump()
        #expect(Self.differences(after, expected).isEmpty, "\(Self.differences(after, expected))")
        // The erasure destroyed the key the batch's addresses are sealed with; the rows still hash to their roots.
        let verify = try handover("verify", "--deep", "--ledger", s.ledger)
        #expect(verify.status == 0, "\(verify.out)\(verify.err)")
    }

    /// `tools/check-bundle.py` on `bundle`.
    static func pythonCheck(_ bundle: String) throws -> (status: Int32, out: String, err: String) {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        return try runCommand("/usr/bin/env", ["python3", repository + "/tools/check-bundle.py", bundle])
    }

    /// The accounts whose rows differ, for a failure's message.
    static func differences(_ a: [String: [String?]], _ b: [String: [String?]]) -> String {
        Set(a.keys).union(b.keys).sorted().filter { a[$0] != b[$0] }.prefix(5).map { "\($0): \(a[$0] ?? []) against \(b[$0] ?? [])" }.joined(
            separator: "; ")
    }
}

extension String {
    /// The string with spaces before it, `width` characters in all.
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
