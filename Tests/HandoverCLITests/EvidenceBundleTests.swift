import Basics
import Foundation
import TestSupport
import Testing

@testable import Ledger
@testable import Projections

/// `handover evidence`: one user's events and proofs, checked with no ledger by
/// `handover evidence verify` and by `tools/check-bundle.py`, written from the documents alone.
@Suite("one user's evidence bundle", .serialized)
struct EvidenceBundleTests {
    let dir = TemporaryDirectory()
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// `tools/check-bundle.py` on `bundle`.
    func pythonCheck(_ bundle: String, _ options: [String] = []) throws -> (status: Int32, out: String, err: String) {
        try runCommand("/usr/bin/env", ["python3", EvidenceBundleTests.repository + "/tools/check-bundle.py", bundle] + options)
    }

    /// Both checks accept `bundle`.
    func expectAccepted(_ bundle: String, _ what: String) throws {
        let ours = try handover(["evidence", "verify", bundle])
        #expect(ours.status == 0 && ours.out.hasPrefix("OK: "), "\(what): \(ours.out)\(ours.err)")
        // Signed by `handover checkpoint`, the checkpoint covers the person index: the history is proven whole.
        #expect(ours.out.contains("Complete: the events and rows shown are every event and row"), "\(what): \(ours.out)")
        let theirs = try pythonCheck(bundle)
        #expect(theirs.status == 0 && theirs.out.contains("COMPLETE:"), "\(what): check-bundle.py: \(theirs.out)\(theirs.err)")
    }

    /// The demo's two ledgers, each with a checkpoint signed.
    func demo() throws -> (sender: String, recipient: String) {
        let sender = try DemoLedger.copy(.sender, into: dir)
        let recipient = try DemoLedger.copy(.recipient, into: dir)
        for ledger in [sender, recipient] {
            let signed = try handover(["checkpoint", "--ledger", ledger])
            try #require(signed.status == 0, "\(signed.err)")
        }
        return (sender, recipient)
    }

    /// Every user of `ledger` with its state, as `query state --format json` gives them.
    func users(_ ledger: String) throws -> [[String: JSONValue]] {
        let state = try handover(["query", "state", "--ledger", ledger, "--format", "json"])
        return try #require(try JSONValue.parse(Array(state.out.utf8)).arrayValue).compactMap(\.objectValue)
    }

    @Test(
        "bundles for users whose histories cover generation, exchange, failure then retry, sign-in, every notification type and erasure: both checks accept each; the events are the user's history"
    )
    func bundlesAccepted() throws {
        let (sender, recipient) = try demo()
        let b = try users(recipient)
        func first(_ why: String, _ test: ([String: JSONValue]) -> Bool) throws -> String {
            let found = b.first(where: test)
            let user = try #require(found, "the demo has a user who \(why)")
            let subject = user["recipient_sub"]?.stringValue ?? user["transfer_sub"]?.stringValue
            return try #require(subject)
        }
        var subjects: [(ledger: String, subject: String, why: String)] = [
            (sender, try #require(try users(sender).first?["account_id"]?.stringValue), "transfer ID generated"),
            (recipient, try first("was exchanged") { $0["migrated_via"]?.stringValue == "exchange" }, "exchanged"),
            // Failed, then tried again: migrated on the retry when the demo's seeded faults allow
            // it, else a user Apple refused each time (the revoked ones, every run).
            (
                recipient,
                try first("failed and was tried again") { user in
                    let retried = { (u: [String: JSONValue]) in (u["attempts"]?.intValue ?? 0) > 1 }
                    return retried(user)
                        && (user["status"]?.stringValue == "migrated" || !b.contains { retried($0) && $0["status"]?.stringValue == "migrated" })
                }, "failure then retry"
            ),
            (recipient, try first("signed in") { $0["migrated_via"]?.stringValue == "sign-in" }, "sign-in"),
            (recipient, try first("was erased") { $0["erased_at"]?.stringValue != nil }, "erased"),
        ]
        // Users between them covering every notification type the demo recorded.
        var kinds = Set<String>()
        for user in b where (user["notifications"]?.intValue ?? 0) > 0 {
            guard let sub = user["recipient_sub"]?.stringValue else { continue }
            let events = try handover(["query", "events", "--id", sub, "--ledger", recipient, "--format", "json"])
            let types = try #require(try JSONValue.parse(Array(events.out.utf8)).arrayValue).compactMap {
                $0.objectValue?["body"]?.objectValue?["notification_type"]?.stringValue
            }
            if !Set(types).isSubset(of: kinds) {
                kinds.formUnion(types)
                subjects.append((recipient, sub, "notifications " + types.joined(separator: ",")))
            }
        }
        let all = try handover(["query", "events", "--type", "notification-received", "--ledger", recipient, "--format", "json"])
        let recorded = Set(
            try #require(try JSONValue.parse(Array(all.out.utf8)).arrayValue).compactMap {
                $0.objectValue?["body"]?.objectValue?["notification_type"]?.stringValue
            })
        #expect(kinds == recorded && recorded.count >= 3, "notification types covered: \(kinds.sorted()), recorded: \(recorded.sorted())")

        for (n, (ledger, subject, why)) in subjects.enumerated() {
            let bundle = dir.sub("bundle-\(n)")
            let r = try handover(["evidence", subject, "--ledger", ledger, "--out", bundle])
            #expect(r.status == 0, "\(why): \(r.out)\(r.err)")
            try expectAccepted(bundle, why)
            // The bundle's events are the user's history, as `query events --id` lists it, and on
            // team B's side the package's "handoff received" and the rows event holding the user's
            // row, beside which that row is.
            let listed = try handover(["query", "events", "--id", subject, "--ledger", ledger, "--format", "json"])
            let history = try #require(try JSONValue.parse(Array(listed.out.utf8)).arrayValue).compactMap { $0.objectValue?["seq"]?.intValue }
            let files = try FileManager.default.contentsOfDirectory(atPath: bundle + "/events").compactMap { Int64($0.dropLast(5)) }.sorted()
            let rows = ((try? FileManager.default.contentsOfDirectory(atPath: bundle + "/rows")) ?? []).compactMap { Int64($0.dropLast(5)) }
            let batches = try files.filter { !history.contains($0) }.map { seq in
                try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: "\(bundle)/events/\(seq).json"))))["type"]?.stringValue ?? ""
            }
            #expect(Set(history).isSubset(of: files) && !files.isEmpty, "\(why): bundle \(files), history \(history)")
            let kinds: Set = ["handoff-received", "handoff-rows-received", "apply-intended", "apply-settled", "person-index-committed"]
            #expect(
                Set(batches).isSubset(of: kinds) && rows.allSatisfy(files.contains) && batches.count <= rows.count + 2
                    && batches.filter { $0 == "person-index-committed" }.count == 1,
                "\(why): beside the history, \(batches) with rows \(rows)")
            #expect(
                rows.count <= 3 && (ledger == recipient || rows.isEmpty) && (why != "exchanged" || rows.count == 3),
                "\(why): team B's user's rows of their package and apply batch (an exchanged user has three), none on team A's side: \(rows)")
            #expect(
                try String(contentsOfFile: bundle + "/VERIFY.md", encoding: .utf8)
                    == (try String(contentsOfFile: EvidenceBundleTests.repository + "/schemas/evidence-bundle.md", encoding: .utf8)))
        }
    }

    @Test(
        "one byte changed in an event, a proof, the checkpoint or the verifier key: both checks refuse, naming the file; an erased user's bundle holds no address; evidence runs on a keyless backup and changes nothing"
    )
    func bundlesRefusedAndKeyless() throws {
        let (_, recipient) = try demo()
        let b = try users(recipient)
        let erased = try #require(b.first { $0["erased_at"]?.stringValue != nil && $0["transfer_sub"]?.stringValue != nil })
        let subject = try #require(erased["transfer_sub"]?.stringValue)
        let bundle = dir.sub("erased")
        var r = try handover(["evidence", subject, "--ledger", recipient, "--out", bundle, "--reveal"])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        try expectAccepted(bundle, "the erased user")
        // Its address, as the exchange's output held it before the erasure, is in no file.
        let exchanged = try String(contentsOfFile: try DemoLedger.copy(file: "exchanged.csv", into: dir), encoding: .utf8)
        let address = try #require(exchanged.split(separator: "\n").first { $0.contains(subject) }?.split(separator: ",").first { $0.contains("@") })
        #expect(try !filesContain(bundle, String(address)), "the erased user's address \(address) is in the bundle")

        let sequence = try #require(try FileManager.default.contentsOfDirectory(atPath: bundle + "/events").first).dropLast(5)
        for file in ["events/\(sequence).json", "proofs/\(sequence).tlog-proof", "checkpoint", "verifier-key"] {
            let copy = dir.sub("changed-" + file.replacingOccurrences(of: "/", with: "-"))
            let copied = try runCommand("/bin/cp", ["-a", bundle, copy])
            #expect(copied.status == 0, "\(copied.err)")
            var bytes = Array(try #require(FileManager.default.contents(atPath: copy + "/" + file)))
            // A byte inside the part that is checked: the base64 of a hash or key, a JSON string.
            let at = file == "checkpoint" ? bytes.firstIndex(of: 0x0A)! + 8 : (file.hasPrefix("proofs") ? 40 : bytes.count / 2)
            bytes[at] = bytes[at] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            try Data(bytes).write(to: URL(fileURLWithPath: copy + "/" + file))
            let ours = try handover(["evidence", "verify", copy])
            #expect(ours.status == 4 && ours.err.contains("the bundle does not hold: \(file):"), "\(file): \(ours.out)\(ours.err)")
            let theirs = try pythonCheck(copy)
            #expect(theirs.status != 0 && theirs.err.contains(file), "\(file): check-bundle.py: \(theirs.out)\(theirs.err)")
        }

        // A keyless backup, read-only: the same bundle, and no file of the copy changed.
        let evidence = dir.sub("keyless")
        let backup = try handover(["backup", "--ledger", recipient, "--out", evidence, "--without-keys"])
        #expect(backup.status == 0, "\(backup.err)")
        let before = try fileStates(evidence)
        let fromCopy = dir.sub("from-keyless")
        r = try handover(["evidence", subject, "--ledger", evidence, "--out", fromCopy])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        try expectAccepted(fromCopy, "from the keyless copy")
        #expect(try fileStates(evidence) == before)
        for name in try FileManager.default.contentsOfDirectory(atPath: bundle + "/events") {
            #expect(
                FileManager.default.contents(atPath: fromCopy + "/events/" + name) == FileManager.default.contents(atPath: bundle + "/events/" + name)
            )
        }
    }

    @Test("query events --id lists exactly the events query user shows in its history, for every user of the demo's two ledgers")
    func eventsByIdentifierAreTheHistory() throws {
        let (sender, recipient) = try demo()
        for path in [sender, recipient] {
            let projection = UserProjection()
            let opened = try Ledger.open(at: path, folders: [projection], options: .init(access: .readOnly))
            defer { opened.close() }
            var users: [UserState] = []
            try projection.read(opened) { snapshot, _ in try snapshot.forEachUser { users.append($0) } }
            #expect(users.count > 100)
            for user in users {
                let history = try EventQuery.history(of: user, in: opened, projection: projection).map(\.sequence)
                for identifier in user.identifiers {
                    let listed = try EventQuery(identifier: identifier.value).run(on: opened, projection: projection).map(\.sequence)
                    #expect(listed == history, "user \(user.key) by \(identifier): \(listed) against \(history)")
                }
            }
        }
    }

    @Test(
        "two-sided, team A's log witnessed by team B's serve: team A's side carries the cosigned checkpoint and its policy, write and verify say so, check-bundle.py accepts it, a changed cosignature is refused naming the file"
    )
    func twoSidedWitnessed() throws {
        let (sender, recipient) = try demo()
        let witnessKey = try handover(["witness", "key", "--ledger", recipient]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        let senderKey = try DemoLedger.copy(file: "sender.pub", into: dir)
        let server = try ServerProcess(["serve", "--ledger", recipient, "--port", "0", "--witness-log", senderKey])
        #expect(try handover(["witness", "add", server.baseURL + "/witness", "--key", witnessKey, "--ledger", sender]).status == 0)
        #expect(try handover(["checkpoint", "--ledger", sender]).status == 0)
        let round = try handover(["witness", "--ledger", sender])
        let served = server.finish()
        try #require(round.status == 0, "\(round.out)\(round.err)\n\(served.err)")
        let witnessName = try #require(witnessKey.split(separator: "+").first.map(String.init))

        let exchanged = try #require(
            try users(recipient).first { $0["migrated_via"]?.stringValue == "exchange" && $0["erased_at"]?.stringValue == nil })
        let account = try #require(exchanged["account_id"]?.stringValue)
        let bundle = dir.sub("two-sided-witnessed")
        let written = try handover(["evidence", account, "--ledger", recipient, "--sender", sender, "--out", bundle])
        #expect(
            written.status == 0 && written.out.contains("\nTeam A's side is proved against a checkpoint cosigned by \(witnessName).\n")
                && !written.out.contains("Team B's side"), "\(written.out)\(written.err)")
        for file in ["cosigned-checkpoint", "witness-policy.json"] {
            #expect(
                FileManager.default.fileExists(atPath: bundle + "/sender/" + file)
                    && !FileManager.default.fileExists(atPath: bundle + "/recipient/" + file))
        }
        let ours = try handover(["evidence", "verify", bundle])
        #expect(
            ours.status == 0
                && ours.out.contains(
                    "):\n  Witnessed: cosigned by \(witnessName), 1 of the quorum of 1 of its own policy (give yours with: handover evidence verify \(bundle)/sender --witness-policy FILE).\n"
                ), "\(ours.out)\(ours.err)")
        #expect(ours.out.components(separatedBy: "Witnessed: ").count == 2, "only team A's side is witnessed: \(ours.out)")
        let theirs = try pythonCheck(bundle)
        #expect(theirs.status == 0, "check-bundle.py: \(theirs.out)\(theirs.err)")

        // The witness's cosignature changed: the side no longer meets its policy.
        let cosigned = bundle + "/sender/cosigned-checkpoint"
        var lines = try String(contentsOfFile: cosigned, encoding: .utf8).components(separatedBy: "\n")
        let last = try #require(lines.lastIndex { $0.hasPrefix("\u{2014} " + witnessName + " ") })
        var signature = Array(lines[last].utf8)
        signature[signature.count - 6] = signature[signature.count - 6] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        lines[last] = String(decoding: signature, as: UTF8.self)
        try lines.joined(separator: "\n").write(toFile: cosigned, atomically: true, encoding: .utf8)
        let refused = try handover(["evidence", "verify", bundle])
        #expect(refused.status == 4 && refused.err.contains("sender/cosigned-checkpoint"), "\(refused.out)\(refused.err)")
    }

    @Test(
        "two-sided: one person's evidence from both ledgers, tied by the package's manifest and the cosignature; both checks accept it and refuse any changed byte; an erased user's holds no address"
    )
    func twoSided() throws {
        let (sender, recipient) = try demo()
        let keys = [
            "--sender-key", try DemoLedger.copy(file: "sender.pub", into: dir), "--recipient-key",
            try DemoLedger.copy(file: "recipient.pub", into: dir),
        ]
        // A user exchanged by team B, asked for by team A's account ID.
        let exchanged = try #require(
            try users(recipient).first { $0["migrated_via"]?.stringValue == "exchange" && $0["erased_at"]?.stringValue == nil })
        let account = try #require(exchanged["account_id"]?.stringValue)
        let bundle = dir.sub("two-sided")
        let written = try handover(["evidence", account, "--ledger", recipient, "--sender", sender, "--out", bundle])
        #expect(
            written.status == 0 && written.out.contains("1 package tying them (1 with the recipient's cosignature)"), "\(written.out)\(written.err)")
        let ours = try handover(["evidence", "verify", bundle] + keys)
        #expect(ours.status == 0 && ours.out.hasPrefix("OK: transfer_sub "), "\(ours.out)\(ours.err)")
        let theirs = try pythonCheck(bundle)
        #expect(theirs.status == 0, "check-bundle.py: \(theirs.out)\(theirs.err)")
        let types = try FileManager.default.contentsOfDirectory(atPath: bundle + "/sender/events").compactMap { name in
            try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: bundle + "/sender/events/" + name))))["type"]?.stringValue
        }
        #expect(Set(types) == ["transfer-id-generated", "handoff-issued", "handoff-acknowledged", "person-index-committed"], "\(types)")

        // One byte changed in an event, a proof, a checkpoint, the manifest or the cosigned checkpoint.
        let senderEvent = try #require(try FileManager.default.contentsOfDirectory(atPath: bundle + "/sender/events").first)
        let recipientProof = try #require(try FileManager.default.contentsOfDirectory(atPath: bundle + "/recipient/proofs").first)
        let changes: [(file: String, line: Int)] = [
            ("sender/events/" + senderEvent, 0), ("recipient/proofs/" + recipientProof, 2), ("sender/checkpoint", 2),
            ("handoff/1/manifest.txt", 1), ("handoff/1/cosigned-checkpoint.txt", 5),
        ]
        for change in changes {
            let copy = dir.sub("two-sided-changed-" + change.file.replacingOccurrences(of: "/", with: "-"))
            #expect(try runCommand("/bin/cp", ["-a", bundle, copy]).status == 0)
            var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: copy + "/" + change.file)))
            let starts = [0] + bytes.indices.filter { bytes[$0] == 0x0A }.map { $0 + 1 }
            let at = (starts[change.line] + (change.line + 1 < starts.count ? starts[change.line + 1] - 1 : bytes.count)) / 2
            bytes[at] = bytes[at] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            try Data(bytes).write(to: URL(fileURLWithPath: copy + "/" + change.file))
            let refused = try handover(["evidence", "verify", copy] + keys)
            #expect(refused.status == 4 && refused.err.contains("the bundle does not hold: "), "\(change.file): \(refused.out)\(refused.err)")
            let theirsRefused = try pythonCheck(copy)
            #expect(theirsRefused.status != 0, "\(change.file): check-bundle.py: \(theirsRefused.out)\(theirsRefused.err)")
        }

        // An erased user's two-sided bundle holds no address in clear.
        let erased = try #require(try users(recipient).first { $0["erased_at"]?.stringValue != nil && $0["transfer_sub"]?.stringValue != nil })
        let subject = try #require(erased["transfer_sub"]?.stringValue)
        let erasedBundle = dir.sub("two-sided-erased")
        let r = try handover(["evidence", subject, "--ledger", recipient, "--sender", sender, "--out", erasedBundle])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(try handover(["evidence", "verify", erasedBundle] + keys).status == 0)
        let exchangedFile = try String(contentsOfFile: try DemoLedger.copy(file: "exchanged.csv", into: dir), encoding: .utf8)
        if let address = exchangedFile.split(separator: "\n").first(where: { $0.contains(subject) })?.split(separator: ",").first(where: {
            $0.contains("@")
        }) {
            #expect(try !filesContain(erasedBundle, String(address)), "the erased user's address is in the bundle")
        }
        #expect(try !filesContain(erasedBundle, "@privaterelay") && !filesContain(erasedBundle, "@example.com"), "no address in clear")
    }
}
