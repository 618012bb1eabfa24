import Apply
import Basics
import Foundation
import GRDB
import Ledger
import Logging
import Projections
import TestSupport
import Testing

/// `handover apply` on the demo's team B ledger and an app database made from team A's users:
/// what an operator relies on, through the command line.
@Suite("handover apply, end to end")
struct ApplyCommandTests {
    /// The demo's team B ledger, and an app database holding an account for each of team A's
    /// users (their sender `sub` in `apple_sub`), a second account `dup-1` holding the new `sub`
    /// of a user who signed in during the window, and an account of another provider.
    struct Setup {
        let dir = TemporaryDirectory()
        let ledger: String
        var app: String
        /// The user who signed in early, whose new sub `dup-1` holds.
        let signedIn: (accountID: String, recipientSub: String)

        init() throws {
            ledger = try DemoLedger.copy(.recipient, into: dir)
            var rows: [[String]] = []
            for file in ["users.csv", "users-late.csv"] {
                let text = try String(contentsOfFile: try DemoLedger.copy(file: file, into: dir), encoding: .utf8)
                rows += text.split(whereSeparator: \.isNewline).dropFirst().map { $0.split(separator: ",").map(String.init) }
            }
            app = dir.sub("app.sqlite")
            let state = try Self.state(ledger)
            let early = try #require(state.first { $0["migrated_via"] == "sign-in" && $0["account_id"] != "" })
            signedIn = (early["account_id"]!, early["recipient_sub"]!)
            try DatabaseQueue(path: app).write { [signedIn, rows] db in
                try db.execute(sql: "CREATE TABLE accounts (id TEXT PRIMARY KEY, provider TEXT NOT NULL, apple_sub TEXT)")
                for row in rows { try db.execute(sql: "INSERT OR IGNORE INTO accounts VALUES (?, 'apple', ?)", arguments: [row[1], row[0]]) }
                try db.execute(sql: "INSERT INTO accounts VALUES ('dup-1', 'apple', ?)", arguments: [signedIn.recipientSub])
                try db.execute(sql: "INSERT INTO accounts VALUES ('g-1', 'google', 'google.1')")
            }
        }

        /// The same ledger, applying to the app database at `path`, a copy of `app` as it was made.
        func applying(to path: String, from pristine: String) throws -> Setup {
            try FileManager.default.copyItem(atPath: pristine, toPath: path)
            var other = self
            other.app = path
            return other
        }

        /// `query state` as rows keyed by column.
        static func state(_ ledger: String) throws -> [[String: String]] {
            let r = try handover("query", "state", "--ledger", ledger, "--format", "csv")
            #expect(r.status == 0, "\(r.err)")
            let lines = r.out.split(separator: "\r\n", omittingEmptySubsequences: true).map {
                $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            }
            return lines.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(lines[0], $0)) }
        }

        var options: [String] {
            [
                "--ledger", ledger, "--to", app, "--table", "accounts", "--key", "account_id=id", "--set", "recipient_sub=apple_sub", "--where",
                "provider = 'apple'",
            ]
        }

        func apply(_ extra: String...) throws -> (status: Int32, out: String, err: String) { try handover(["apply"] + options + extra) }

        /// The accounts table: id → apple_sub.
        func accounts() throws -> [String: String?] {
            try DatabaseQueue(path: app).read { db in
                Dictionary(
                    uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, apple_sub FROM accounts").map {
                        ($0["id"] as String, $0["apple_sub"] as String?)
                    })
            }
        }

        /// What the ledger records of apply to this test's database (``ApplyCommandTests/recorded(_:target:)``).
        func recorded() throws -> Recorded { try ApplyCommandTests.recorded(ledger, target: app) }
    }

    /// What a ledger records of apply to one database, by "run/batch": every intent and
    /// settlement, and each committed account's sub outcomes in order.
    typealias Recorded = (intents: [String: ApplyIntended], settled: [String: ApplySettled], outcomes: [String: [ApplyOutcome]])

    /// What `ledger` records of the apply runs to `target` (the demo applied to its own).
    static func recorded(_ ledger: String, target: String) throws -> Recorded {
        let log = try Ledger.open(at: ledger, options: Ledger.Options(access: .readOnly))
        defer { log.close() }
        return try log.read { view in
            var intents: [String: ApplyIntended] = [:]
            var settled: [String: ApplySettled] = [:]
            var outcomes: [String: [ApplyOutcome]] = [:]
            var runs: Set<String> = []
            for sequence in try view.sequences(of: .applyStarted) {
                guard let event = try view.event(sequence), case .applyStarted(let started) = event.body, started.target == target,
                    let run = event.actor.runID
                else { continue }
                runs.insert(run)
            }
            for sequence in try view.sequences(of: .applyIntended) {
                guard let event = try view.event(sequence), case .applyIntended(let i) = event.body, runs.contains(event.actor.runID ?? "") else {
                    continue
                }
                intents["\(event.actor.runID ?? "")/\(i.batch)"] = i
            }
            for sequence in try view.sequences(of: .applySettled) {
                guard let event = try view.event(sequence), case .applySettled(let s) = event.body, runs.contains(event.actor.runID ?? "") else {
                    continue
                }
                settled["\(event.actor.runID ?? "")/\(s.batch)"] = s
                for row in s.rows { if let outcome = row.outcome(.recipientSub) { outcomes[row.account, default: []].append(outcome) } }
            }
            return (intents, settled, outcomes)
        }
    }

    /// The marker rows of the SQLite database at `path`: (run, batch) → (intent SHA-256, outcome letters).
    static func markers(_ path: String) throws -> [String: (String, String)] {
        try DatabaseQueue(path: path).read { db in
            guard try db.tableExists("handover_apply") else { return [:] }
            return Dictionary(
                uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT run, batch, intent_sha256, outcomes FROM handover_apply").map {
                    ("\($0["run"] as String)/\($0["batch"] as Int)", ($0["intent_sha256"] as String, $0["outcomes"] as String))
                })
        }
    }

    /// The migrated users with an account_id: account → new sub.
    static func migrated(_ ledger: String) throws -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: try Setup.state(ledger).filter { $0["status"] == "migrated" && $0["account_id"] != "" }.map {
                ($0["account_id"]!, $0["recipient_sub"]!)
            })
    }

    @Test(
        "the plan changes no byte; the commit sets exactly the migrated users' accounts, reports the sign-in race's duplicate and writes around it; a rerun records nothing; the undo restores every value"
    )
    func planCommitRerunUndo() throws {
        let s = try Setup()
        let original = try s.accounts()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: s.app))
        let head = try handover("verify", "--ledger", s.ledger).out

        let plan = try s.apply()
        #expect(plan.status == 0, "\(plan.err)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: s.app)) == bytes, "a plan writes nothing to the app's database")
        #expect(try handover("verify", "--ledger", s.ledger).out == head, "nor to the ledger")
        let migrated = try Self.migrated(s.ledger)
        #expect(plan.out.contains("change      \(migrated.count - 1) "), "\(plan.out)")
        #expect(plan.out.contains("collision   1 "))
        #expect(
            plan.out.contains("account \(s.signedIn.accountID) (new sub \(s.signedIn.recipientSub)): the user signed in with the new sub at"),
            "\(plan.out)")
        #expect(plan.out.contains("(the sign-in race): account dup-1 was most likely made for them then"))

        let commit = try s.apply("--commit", "--batch-size", "40")
        #expect(commit.status == 1, "a collision leaves a user for a person to see to: \(commit.err)")
        #expect(commit.out.contains("applied \(migrated.count - 1), collision 1."), "\(commit.out)")
        let runID = try #require(commit.out.split(separator: " ").dropFirst(2).first.map(String.init))
        var expected = original
        for (account, sub) in migrated where account != s.signedIn.accountID { expected[account] = sub }
        #expect(
            try s.accounts() == expected, "exactly the migrated users' accounts, the collision not written, dup-1 and the other provider untouched")

        let state = Dictionary(uniqueKeysWithValues: try Setup.state(s.ledger).map { ($0["account_id"]!, $0) })
        #expect(state[s.signedIn.accountID]?["apply_outcome"] == "collision")
        #expect(
            migrated.keys.filter { $0 != s.signedIn.accountID }.allSatisfy {
                state[$0]?["apply_outcome"] == "applied" && state[$0]?["applied_at"] != ""
            })
        #expect(state.values.filter { $0["status"] != "migrated" }.allSatisfy { $0["apply_outcome"] == "" }, "a user not migrated is not applied")
        #expect(try handover("query", "user", s.signedIn.accountID, "--ledger", s.ledger).out.contains("apply_outcome        collision"))

        // One person's part: their history's line, and their evidence bundle, which proves their
        // row of the batch as intended and as settled, and names nobody else.
        let person = try #require(migrated.keys.sorted().first { $0 != s.signedIn.accountID })
        let shown = try handover("query", "user", person, "--ledger", s.ledger).out
        #expect(
            shown.contains("apply run \(runID) batch ")
                && shown.contains(": applied, \(original[person]!!) → \(migrated[person]!) (intended in event "), "\(shown)")
        #expect(try handover("checkpoint", "--ledger", s.ledger).status == 0)
        let bundle = s.dir.sub("evidence")
        #expect(try handover("evidence", person, "--ledger", s.ledger, "--out", bundle).status == 0)
        let manifest = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: bundle + "/manifest.json"))))
        #expect(manifest["apply"] == nil, "every batch of this run is proven, none only stated: \(manifest)")
        let story = try handover("evidence", "verify", bundle)
        #expect(story.status == 0, "\(story.err)")
        #expect(
            story.out.contains("  proven  apply run \(runID) batch ")
                && story.out.contains(": change, \(original[person]!!) → \(migrated[person]!) (row ")
                && story.out.contains("settled for account_id \(person): applied (row "), "\(story.out)")
        for other in migrated.keys where other != person {
            #expect(try !filesContain(bundle, other + "\""), "another account in \(person)'s bundle: \(other)")
        }

        let events = try handover("query", "events", "--ledger", s.ledger, "--format", "csv").out
        let again = try s.apply("--commit")
        #expect(again.status == 0, "\(again.err)")
        #expect(again.out.contains("Nothing new to write or record"), "\(again.out)")
        #expect(try handover("query", "events", "--ledger", s.ledger, "--format", "csv").out == events, "a second run records nothing")
        #expect(try s.accounts() == expected)

        let undo = try s.apply("--undo", runID, "--commit")
        #expect(undo.status == 0, "\(undo.err)")
        #expect(undo.out.contains("undone \(migrated.count - 1)."), "\(undo.out)")
        #expect(try s.accounts() == original, "every old value restored")
        #expect(
            Dictionary(uniqueKeysWithValues: try Setup.state(s.ledger).map { ($0["account_id"]!, $0["apply_outcome"]!) })[
                migrated.keys.first { $0 != s.signedIn.accountID }!] == "undone")
        #expect(try s.apply("--undo", runID, "--commit").out.contains("Nothing new"), "an undo done is not done twice")
        let verify = try handover("verify", "--deep", "--ledger", s.ledger)
        #expect(verify.status == 0, "\(verify.out)\(verify.err)")
    }

    @Test(
        "--users limits the plan to the accounts listed (CRLF, blanks and repeats taken in stride); the list may come from standard input (-); a line with a control character, or a directory, is refused naming it (exit 2)"
    )
    func usersList() throws {
        let s = try Setup()
        let migrated = try Self.migrated(s.ledger).keys.sorted()
        let list = s.dir.sub("users.txt")
        try Data("\(migrated[0])\r\n\n  \(migrated[1])  \n\(migrated[0])\n".utf8).write(to: URL(fileURLWithPath: list))
        let plan = try s.apply("--users", list)
        #expect(plan.status == 0 && plan.out.contains(", 2 accounts:"), "\(plan.out)\(plan.err)")
        let bad = s.dir.sub("bad.txt")
        try Data("\(migrated[0])\nacct\u{1}x\n".utf8).write(to: URL(fileURLWithPath: bad))
        let refused = try s.apply("--users", bad)
        #expect(
            refused.status == 2 && refused.err == "error: --users \(bad), line 2: \"acct\\u0001x\" contains a control character\n", "\(refused.err)")
        let piped = try runProduct("handover", ["apply"] + s.options + ["--users", "-"], input: try Data(contentsOf: URL(fileURLWithPath: list)))
        #expect(piped.status == 0 && piped.out == plan.out, "the list read from standard input: \(piped.out)\(piped.err)")
        let notFile = try s.apply("--users", s.dir.path)
        #expect(notFile.status == 2 && notFile.err.contains("--users: \(s.dir.path) is not a file or a pipe"), "\(notFile.err)")
    }

    @Test(
        "apply --commit of the sub and the relay address SIGKILLed between a batch's intent and its settlement (10 kills) and run again: every account holds exactly what one uninterrupted run leaves, the ledger's cells equal the database's markers letter by letter, verify --deep passes"
    )
    func killedAndResumed() throws {
        let s = try EmailSetup()
        let pristine = try s.pristine()
        func copy(_ name: String) throws -> SQLiteAppTable { try s.copy(of: pristine, as: name) }
        // What one uninterrupted run leaves, on a ledger of its own.
        let referenceLedger = s.dir.sub("reference-ledger")
        #expect(try runCommand("/bin/cp", ["-a", s.ledger, referenceLedger]).status == 0)
        let reference = try copy("reference.sqlite")
        let once = try handover(s.options(reference, set: ApplyEmailTests.both, ledger: referenceLedger) + ["--commit"])
        #expect(once.status == 1, "the collisions wait for a person: \(once.out)\(once.err)")
        let expected = try reference.dump()
        #expect(!ApplyEmailTests.differences(expected, try pristine.dump()).isEmpty)

        let watched = try Ledger.open(at: s.ledger, options: Ledger.Options(access: .readOnly))
        defer { watched.close() }
        func intents() throws -> Int { try watched.read { try $0.sequences(of: .applyIntended).count } }
        /// The batches to `table` recorded as intended and not (yet) as settled.
        func unsettled(_ table: SQLiteAppTable) throws -> Set<String> {
            let (intents, settled, _) = try Self.recorded(s.ledger, target: table.path)
            return Set(intents.keys).subtracting(settled.keys)
        }
        // Each run is killed within 20 ms of its first intent being durable; a kill counts when
        // it left an intent of its own unsettled: between the ledger's intent and its settlement,
        // the batch written to the database or not. A run that ends first (the work done) starts
        // a new round on a fresh copy of the app's database.
        var rounds = [try copy("app-1.sqlite")]
        var landed = 0
        var runs = 0
        while landed < TestSize.pick(quick: 3, full: 10), runs < 80 {
            runs += 1
            let round = rounds.last!
            let (intended, open) = (try intents(), try unsettled(round))
            let process = try RunningProduct("handover", s.options(round, set: ApplyEmailTests.both) + ["--commit", "--batch-size", "1"])
            let ended = try PhaseKill.kill(process, once: { try intents() > intended }, spread: 20_000)
            if ended.signalled {
                if try !unsettled(round).isSubset(of: open) { landed += 1 }
                continue
            }
            #expect([0, 1].contains(ended.status), "\(ended.out)\(ended.err)")
            rounds.append(try copy("app-\(rounds.count + 1).sqlite"))
        }
        #expect(
            landed >= TestSize.pick(quick: 3, full: 10), "\(PhaseKill.tally(landed, of: runs, in: "between a batch's intent and its settlement"))")
        var batchCount = 0
        var recoveredCount = 0
        for round in rounds {
            let last = try handover(s.options(round, set: ApplyEmailTests.both) + ["--commit", "--batch-size", "3"])
            #expect([0, 1].contains(last.status), "\(last.out)\(last.err)")
            #expect(try handover(s.options(round, set: ApplyEmailTests.both) + ["--commit"]).out.contains("Nothing new"), "the work is done")
            let final = try round.dump()
            #expect(ApplyEmailTests.differences(final, expected).isEmpty, "\(ApplyEmailTests.differences(final, expected))")

            let markers = try Self.markers(round.path)
            let (intents, batches, _) = try Self.recorded(s.ledger, target: round.path)
            batchCount += batches.count
            recoveredCount += batches.values.filter(\.recovered).count
            // Row by row: each intent is settled; a committed settlement has its marker, with the
            // same intent digest and, changed cell by changed cell, the same outcomes; one not
            // committed has none. Every cell applied once, as the ledger and the markers say.
            #expect(Set(intents.keys) == Set(batches.keys), "every intent settled")
            var applied: [String: Int] = [:]
            for (key, settlement) in batches {
                let intent = try #require(intents[key])
                guard settlement.committed else {
                    #expect(markers[key] == nil && settlement.recovered, "\(key) did not commit, and only a later run can know it")
                    continue
                }
                let marker = try #require(markers[key], "settled batch \(key) has no marker")
                #expect(marker.0 == intent.sha256 && settlement.intentSHA256 == intent.sha256)
                let written = intent.changes.map { cell in
                    switch settlement.rows[cell.row].outcome(cell.column) {
                    case .applied?: "a"
                    case .collision?: "c"
                    default: "m"
                    }
                }.joined()
                #expect(written == marker.1, "\(key): the ledger says \(written), the marker \(marker.1)")
                for row in settlement.rows {
                    for cell in row.outcomes where cell.outcome == .applied { applied["\(row.account) \(cell.column.rawValue)", default: 0] += 1 }
                }
            }
            #expect(applied.values.allSatisfy { $0 == 1 }, "a cell applied twice: \(applied.filter { $0.value > 1 })")
            #expect(markers.values.map(\.1).joined().filter { $0 == "a" }.count == applied.count)
            #expect(Set(markers.keys).isSubset(of: Set(batches.keys)), "every marker is a batch the ledger settled")
        }
        let verify = try handover("verify", "--deep", "--ledger", s.ledger)
        #expect(verify.status == 0, "\(verify.out)\(verify.err)")
        print(
            "apply killed \(landed) times between intent and settlement in \(runs) runs over \(rounds.count) round(s); \(batchCount) batches settled, \(recoveredCount) of them from markers"
        )
    }
}

/// The app changing an account between `apply`'s read and its write, through a table that
/// makes the change just before each batch is written.
@Suite("apply and the app writing meanwhile")
struct ApplyMeanwhileTests {
    /// A SQLite accounts table whose every write is preceded by `meddle` with the batch's changes.
    final class MeddlingTable: AccountsTable, Sendable {
        let inner: SQLiteAccounts
        let meddle: @Sendable ([AccountChange]) throws -> Void
        init(_ inner: SQLiteAccounts, meddle: @escaping @Sendable ([AccountChange]) throws -> Void) {
            self.inner = inner
            self.meddle = meddle
        }
        var mapping: ApplyMapping { inner.mapping }
        var targetKind: ApplyStarted.TargetKind { inner.targetKind }
        var targetName: String { inner.targetName }
        func currentValues(forKeys keys: [String]) async throws -> [String: [String?]] { try await inner.currentValues(forKeys: keys) }
        func holders(of values: [String], in column: ApplyColumn) async throws -> [String: [String]] {
            try await inner.holders(of: values, in: column)
        }
        func flagText(_ forwarding: Bool) -> String { inner.flagText(forwarding) }
        func committedBatches(of run: String) async throws -> [ApplyMarker] { try await inner.committedBatches(of: run) }
        func write(_ changes: [AccountChange], marker: ApplyMarker) async throws -> [ApplyOutcome] {
            try meddle(changes)
            return try await inner.write(changes, marker: marker)
        }
    }

    @Test(
        "an account the app changed after the plan read it is reported changed-meanwhile, keeps the app's value, and is recorded so; a later run plans it again"
    )
    func changedMeanwhile() async throws {
        let s = try ApplyCommandTests.Setup()
        let app = s.app
        let table = MeddlingTable(
            try SQLiteAccounts(
                path: app, mapping: try ApplyMapping(table: "accounts", key: "account_id=id", set: ["recipient_sub=apple_sub"]), writable: true)
        ) { changes in
            guard let first = changes.first else { return }
            var configuration = Configuration()
            configuration.busyMode = .timeout(30)
            try DatabaseQueue(path: app, configuration: configuration).write {
                try $0.execute(sql: "UPDATE accounts SET apple_sub = 'set-by-the-app' WHERE id = ?", arguments: [first.key])
            }
        }
        let projection = UserProjection()
        let ledger = try Ledger.open(at: s.ledger, folders: [projection], options: Ledger.Options(access: .readWrite))
        let result = try await ApplyRun(
            ledger: ledger, projection: projection, table: table, options: ApplyRun.Options(batchSize: 100),
            logger: Logger(label: "apply-test")
        ).commit()
        let changed = result.notApplied.filter { $0.outcome == .changedMeanwhile }.map(\.entry.accountID)
        #expect(changed.count == 3, "one a batch of 100: \(result.counts)")
        #expect(result.exitStatus == .failed)
        let accounts = try s.accounts()
        #expect(changed.allSatisfy { accounts[$0] == "set-by-the-app" }, "the app's value is kept")
        let states = try projection.read(ledger) { snapshot, _ in
            try changed.map { try snapshot.user(with: Identifier(.accountID, $0))?.applied.recipientSub?.outcome }
        }
        #expect(states.allSatisfy { $0 == .changedMeanwhile })
        ledger.close()
        let plan = try s.apply()
        #expect(plan.out.contains("change      3 "), "the accounts changed meanwhile are planned again: \(plan.out)")
    }
}
