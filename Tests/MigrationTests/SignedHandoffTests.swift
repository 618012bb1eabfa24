import Basics
import Crypto
import Foundation
import Ledger
import LogEngine
import Migration
import Projections
import TestSupport
import Testing

/// Team A's signed handoff package, checked by team B before any call to Apple, and B's
/// cosigned receipt checked by A: each step its own `handover` process, against the stand-in.
@Suite("signed handoff between the two teams", .serialized)
struct SignedHandoffTests {
    /// Both teams with team A's first package issued and each side's verifier key exported.
    struct Fixture {
        let teams: TwoTeamsOnTheCommandLine
        /// The first package, team A's and team B's pinned key files.
        let package: String, senderKey: String, recipientKey: String

        init(users: Int = 12) throws {
            teams = try TwoTeamsOnTheCommandLine(users: users, latencyMilliseconds: 0)
            package = teams.dir.sub("handoff-0001")
            let issued = try handover("handoff", "issue", "--ledger", teams.sender, "--target", "BBBB222222", "--out", package)
            guard issued.status == 0 else { throw ServerProcess.Failed(description: "handoff issue: \(issued.err)") }
            senderKey = try Fixture.exportKey(of: teams.sender, to: teams.dir.sub("a.pub"))
            recipientKey = try Fixture.exportKey(of: teams.recipient, to: teams.dir.sub("b.pub"))
        }

        /// Writes the verifier key of the ledger in `directory` to `path`, as a team hands it over.
        static func exportKey(of directory: String, to path: String) throws -> String {
            let key = try handover("checkpoint", "--public-key", "--ledger", directory)
            guard key.status == 0 else { throw ServerProcess.Failed(description: "checkpoint --public-key: \(key.err)") }
            try Data(key.out.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// Team B's `handover exchange` of `package` with the sender key `key`.
        func exchange(_ package: String, key: String? = nil, receipt: String? = nil) throws -> (status: Int32, out: String, err: String) {
            try handover(
                ["exchange", "--ledger", teams.recipient, "--transfers", package, "--out", teams.output]
                    + (key.map { ["--sender-key", $0] } ?? []) + (receipt.map { ["--receipt", $0] } ?? [])
                    + teams.credentials("BBBB222222", "KEYB222222"))
        }

        /// A copy of `package` at `name`, changed by `edit` (given the copy's directory).
        func tampered(_ name: String, from package: String? = nil, _ edit: (String) throws -> Void) throws -> String {
            let copy = teams.dir.sub(name)
            try FileManager.default.copyItem(atPath: package ?? self.package, toPath: copy)
            try edit(copy)
            return copy
        }

        /// A copy of the first package whose manifest (and rows, by `rows`) are changed by `edit`
        /// and signed again with team A's own key: a package team A really signed, wrong in what it says.
        func resigned(_ name: String, rows: ((String) -> String)? = nil, _ edit: (inout HandoffManifest) throws -> Void) throws -> String {
            try tampered(name) { copy in
                let path = copy + "/" + HandoffPackage.manifestFile
                let note = try SignedNote(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
                var manifest = try HandoffManifest(text: note.text)
                if let rows {
                    let rowsPath = copy + "/" + HandoffPackage.rowsFile
                    let changed = rows(try String(contentsOfFile: rowsPath, encoding: .utf8))
                    try Data(changed.utf8).write(to: URL(fileURLWithPath: rowsPath))
                    manifest.rowsSHA256 = Hex.encode(SHA256.hash(data: Data(changed.utf8)))
                    let lines = changed.components(separatedBy: "\r\n").filter { !$0.isEmpty }.dropFirst()
                    manifest.rowCount = lines.count
                    manifest.rowsRoot = Hex.encode(RowTree(kind: .handoffRow, rows: lines.map { Array($0.utf8) }).root.bytes)
                }
                try edit(&manifest)
                let key = try CheckpointKey.load(from: teams.sender)
                try Data(try SignedNote.signing(manifest.text, name: note.signatures[0].name, key: key).serialized.utf8).write(
                    to: URL(fileURLWithPath: path))
            }
        }

        /// The events of `type` in the ledger at `directory`, as `query events --format json` gives them.
        func events(_ type: String, in directory: String) throws -> [[String: Any]] {
            let listed = try handover("query", "events", "--type", type, "--format", "json", "--ledger", directory)
            return try JSONSerialization.jsonObject(with: Data(listed.out.utf8)) as? [[String: Any]] ?? []
        }
    }

    static func edit(_ path: String, _ change: (String) -> String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let changed = change(text)
        #expect(changed != text, "the edit of \(path) changed something")
        try Data(changed.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test("every tampering is refused with its own reason, and nothing reaches the stand-in; the genuine package goes through")
    func tamperingRefused() async throws {
        let f = try Fixture()
        let rows = f.package + "/" + HandoffPackage.rowsFile
        let lines = try String(contentsOfFile: rows, encoding: .utf8).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(lines.first == "account_id,transfer_sub,seq,salt" && lines.count == 13, "12 rows under the header: \(lines.prefix(3))")

        // A third ledger of team A's, and its key: another ledger's checkpoint, a wrong key.
        let other = f.teams.dir.sub("a-other")
        #expect(try handover("init", "--ledger", other, "--team-id", "AAAA111111", "--client-id", "com.example.app", "--role", "sender").status == 0)
        let otherCheckpoint = f.teams.dir.sub("other-checkpoint.txt")
        #expect(try handover("checkpoint", "--ledger", other, "--out", otherCheckpoint).status == 0)
        let otherKey = try Fixture.exportKey(of: other, to: f.teams.dir.sub("other.pub"))

        let cases: [(what: String, package: String, key: String, reason: String)] = [
            (
                "a row changed",
                try f.tampered("row-changed") {
                    try SignedHandoffTests.edit($0 + "/rows.csv") { $0.replacingOccurrences(of: "\nacct-3,", with: "\nacct-X,") }
                },
                f.senderKey, "rows-digest"
            ),
            (
                "a row removed",
                try f.tampered("row-removed") { dir in
                    try SignedHandoffTests.edit(dir + "/rows.csv") { text in
                        text.components(separatedBy: "\r\n").enumerated().filter { $0.offset != 5 }.map(\.element).joined(separator: "\r\n")
                    }
                }, f.senderKey, "rows-digest"
            ),
            (
                "a row added", try f.tampered("row-added") { try SignedHandoffTests.edit($0 + "/rows.csv") { $0 + "acct-999,t.forged.0001,7\r\n" } },
                f.senderKey, "rows-digest"
            ),
            (
                "the manifest edited",
                try f.tampered("manifest-edited") {
                    try SignedHandoffTests.edit($0 + "/manifest.txt") { $0.replacingOccurrences(of: "\nrows 12\n", with: "\nrows 11\n") }
                },
                f.senderKey, "manifest-signature"
            ),
            (
                "a checkpoint from another ledger",
                try f.resigned("other-checkpoint") {
                    $0.checkpoint = try Checkpoint(parsing: String(contentsOfFile: otherCheckpoint, encoding: .utf8))
                },
                f.senderKey, "checkpoint-from-another-ledger"
            ),
            ("a wrong key", f.package, otherKey, "not-signed-by-pinned-key"),
            ("a wrong target team", try f.resigned("wrong-target") { $0.targetTeam = "CCCC333333" }, f.senderKey, "wrong-target"),
            ("another app", try f.resigned("wrong-client") { $0.clientIDs = ["com.example.other"] }, f.senderKey, "wrong-client"),
            (
                "a row beyond the checkpoint",
                try f.resigned("not-covered", rows: { $0.replacing(#/,\d+(,[0-9a-f]{32}\r\n)$/#) { ",99999" + $0.output.1 } }) { _ in },
                f.senderKey, "rows-not-covered"
            ),
            (
                "rows out of order",
                try f.resigned(
                    "out-of-order-rows",
                    rows: { text in
                        var lines = text.components(separatedBy: "\r\n")
                        lines.swapAt(1, 2)
                        return lines.joined(separator: "\r\n")
                    }
                ) { _ in }, f.senderKey, "rows-not-covered"
            ),
            (
                "a rows root that is not the rows'", try f.resigned("root-replaced") { $0.rowsRoot = String(repeating: "0", count: 64) },
                f.senderKey, "rows-root"
            ),
            (
                "package 2 before package 1",
                try f.resigned("out-of-order") {
                    $0.package = 2
                    $0.previousManifestSHA256 = String(repeating: "0", count: 64)
                }, f.senderKey, "package-out-of-order"
            ),
        ]
        let answersBefore = try await f.teams.standInAnswers()
        for c in cases {
            let refused = try f.exchange(c.package, key: c.key)
            #expect(refused.status == 2, "\(c.what): exit 2, \(refused.err)")
            #expect(
                refused.err.contains("handoff package refused (\(c.reason))") && refused.err.contains("nothing was sent to Apple"),
                "\(c.what): \(refused.err)")
        }
        #expect(try await f.teams.standInAnswers() == answersBefore, "no call reached the stand-in")
        let refusals = try f.events("handoff-refused", in: f.teams.recipient).compactMap { ($0["body"] as? [String: Any])?["reason"] as? String }
        #expect(refusals == cases.map(\.reason), "one \"handoff refused\" per tampering, with its reason")
        #expect(try f.events("run-started", in: f.teams.recipient).isEmpty, "no run started")

        // The genuine package goes through: recorded as received, the run as signed, a receipt written.
        let accepted = try f.exchange(f.package, key: f.senderKey, receipt: f.teams.dir.sub("receipt-0001"))
        #expect(accepted.status == 0, "\(accepted.out)\(accepted.err)")
        #expect(accepted.out.contains("handoff: signed package 1 from team AAAA111111, verified with the pinned key"), "\(accepted.out)")
        let received = try f.events("handoff-received", in: f.teams.recipient)
        #expect(received.count == 1 && (received.first?["body"] as? [String: Any])?["package"] as? Int == 1)
        #expect(((try f.events("run-started", in: f.teams.recipient).first?["body"] as? [String: Any])?["handoff"] as? String) == "signed")
        #expect(try CSVTable(path: f.teams.output).rows.count == 12, "every listed user exchanged")

        // The same package again (a resumed exchange) passes without a second "handoff received",
        // and its receipt says the same (the cosignature is timed when the package was received).
        let firstReceipt = try Data(contentsOf: URL(fileURLWithPath: f.teams.dir.sub("receipt-0001/cosigned-checkpoint.txt")))
        #expect(try f.exchange(f.package, key: f.senderKey, receipt: f.teams.dir.sub("receipt-0001")).status == 0)
        #expect(try f.events("handoff-received", in: f.teams.recipient).count == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: f.teams.dir.sub("receipt-0001/cosigned-checkpoint.txt"))) == firstReceipt)

        // Another manifest under the number already received: the sender said two things.
        let conflicting = try f.resigned("conflicting") { $0.issuedAt = Timestamp(microseconds: $0.issuedAt.microseconds + 1_000_000) }
        let equivocation = try f.exchange(conflicting, key: f.senderKey)
        #expect(equivocation.status == 2 && equivocation.err.contains("handoff package refused (conflicting-package)"), "\(equivocation.err)")

        // Team A's log rewritten, as an insider would, before a second package: B catches it.
        let rewritten = f.teams.dir.sub("a-rewritten")
        try await SignedHandoffTests.rewrite(f.teams.sender, into: rewritten)
        let second = f.teams.dir.sub("handoff-0002-rewritten")
        let issued = try handover("handoff", "issue", "--ledger", rewritten, "--target", "BBBB222222", "--out", second)
        #expect(issued.status == 0 && issued.out.contains("handoff package 2"), "\(issued.out)\(issued.err)")
        let answersBeforeRewrite = try await f.teams.standInAnswers()
        let caught = try f.exchange(second, key: f.senderKey)
        #expect(caught.status == 2 && caught.err.contains("handoff package refused (log-rewritten)"), "\(caught.err)")
        #expect(try await f.teams.standInAnswers() == answersBeforeRewrite, "no call reached the stand-in")

        // Reconcile checks the checkpoint B recorded against A's log as it is: the rewritten
        // one (tree rebuilt, same key and origin) fails, naming the checkpoint; the genuine one holds.
        let rewrittenReconciled = try handover("reconcile", "--sender", rewritten, "--recipient", f.teams.recipient)
        #expect(
            rewrittenReconciled.status == 4 && rewrittenReconciled.err.contains("package 1: checkpoint handover/AAAA111111/")
                && rewrittenReconciled.err.contains("rewritten after the handoff"), "\(rewrittenReconciled.err)")
        // With packages in place of team A's ledger, the rewritten package 2 does not follow package 1.
        let fromPackages = try handover("reconcile", "--recipient", f.teams.recipient, "--packages", f.package, second, "--sender-key", f.senderKey)
        #expect(
            fromPackages.status == 4 && fromPackages.err.contains("package 2: checkpoint") && fromPackages.err.contains("rewritten between the two"),
            "\(fromPackages.err)")
        let rewrittenReport = try handover("report", "--ledger", f.teams.recipient, "--sender", rewritten)
        #expect(rewrittenReport.status == 4 && rewrittenReport.err.contains("package 1: checkpoint"), "\(rewrittenReport.err)")
        let genuineReconciled = try handover("reconcile", "--sender", f.teams.sender, "--recipient", f.teams.recipient)
        #expect(
            genuineReconciled.status == 0 && genuineReconciled.out.contains("each still extended by team A's log"),
            "\(genuineReconciled.out)\(genuineReconciled.err)")

        // A's genuine second package passes the same check.
        let late = f.teams.dir.sub("late.csv")
        try Data("sub,account_id\n0777.late.0001,acct-late-1\n0777.late.0002,acct-late-2\n".utf8).write(to: URL(fileURLWithPath: late))
        #expect(
            try handover(
                ["generate", "--ledger", f.teams.sender, "--users", late, "--target", "BBBB222222", "--out", f.teams.dir.sub("late-out.csv")]
                    + f.teams.credentials("AAAA111111", "KEYA111111")
            ).status == 0)
        let genuine = f.teams.dir.sub("handoff-0002")
        #expect(try handover("handoff", "issue", "--ledger", f.teams.sender, "--target", "BBBB222222", "--out", genuine).status == 0)
        let consistency = try String(contentsOfFile: genuine + "/consistency.txt", encoding: .utf8)
        #expect(consistency.hasPrefix("old ") && !consistency.hasPrefix("old 0\n"), "package 2 proves from package 1's size")
        let exchangedLate = try f.exchange(genuine, key: f.senderKey)
        #expect(exchangedLate.status == 0 && exchangedLate.out.contains("signed package 2"), "\(exchangedLate.out)\(exchangedLate.err)")
        #expect(try f.events("handoff-received", in: f.teams.recipient).count == 2)
    }

    /// Makes at `target` what an insider with team A's keys would: a ledger of the same origin and
    /// key holding A's events with one `account_id` changed, and three more generated identifiers.
    static func rewrite(_ source: String, into target: String) async throws {
        let original = try Ledger.open(at: source, options: Ledger.Options(access: .readOnly))
        let identity = try original.identity()
        var drafts: [EventDraft] = []
        try original.read { view in
            try view.forEachEvent(from: 2, through: UInt64(try view.eventCount())) { event in
                var identifiers = event.identifiers
                if event.type == .transferIDGenerated, identifiers.accountID == "acct-3" { identifiers.accountID = "acct-3-rewritten" }
                drafts.append(
                    EventDraft(
                        event.body, identifiers: identifiers, occurredAt: event.occurredAt, idempotencyKey: event.idempotencyKey,
                        runID: event.actor.runID))
            }
        }
        original.close()
        let forged = try await Ledger.create(at: target, identity, folders: [UserProjection()])
        for name in [CheckpointKey.fileName, VerifierKeyFile.fileName] {
            try? FileManager.default.removeItem(atPath: target + "/" + name)  // absent unless create made one
            try FileManager.default.copyItem(atPath: source + "/" + name, toPath: target + "/" + name)
        }
        for i in 0..<3 {
            drafts.append(
                EventDraft(
                    .transferIDGenerated(TransferIDGenerated(targetTeam: "BBBB222222")),
                    identifiers: Identifiers(accountID: "acct-forged-\(i)", senderSub: "0888.forged.\(i)", transferSub: "t.forged.\(i)")))
        }
        _ = try await forged.append(contentsOf: drafts)
        forged.close()
    }

    @Test("team A confirms B's receipt once; a receipt with one byte changed or signed by another key is refused")
    func receiptConfirmed() async throws {
        let f = try Fixture(users: 6)
        let receipt = f.teams.dir.sub("receipt-0001")
        #expect(try f.exchange(f.package, key: f.senderKey, receipt: receipt).status == 0)

        // One byte changed in each file, in turn: the checkpoint's origin, A's own signature line,
        // the event, an audit-path hash.
        let flips: [(file: String, line: Int, reason: String)] = [
            (HandoffReceipt.cosignedFile, 0, "cosignature"), (HandoffReceipt.cosignedFile, 5, "cosignature"),
            (HandoffReceipt.eventFile, 0, "inclusion-proof"), (HandoffReceipt.proofFile, 2, "inclusion-proof"),
        ]
        for (n, flip) in flips.enumerated() {
            let copy = f.teams.dir.sub("receipt-flipped-\(n)")
            try FileManager.default.copyItem(atPath: receipt, toPath: copy)
            try SignedHandoffTests.flipByte(in: copy + "/" + flip.file, line: flip.line)
            let refused = try handover("handoff", "confirm", copy, "--recipient-key", f.recipientKey, "--ledger", f.teams.sender)
            #expect(refused.status == 2 && refused.err.contains("receipt refused (\(flip.reason))"), "\(flip): \(refused.err)")
        }
        // A cosignature made with another key under team B's name.
        let forged = f.teams.dir.sub("receipt-forged")
        try FileManager.default.copyItem(atPath: receipt, toPath: forged)
        let cosignedPath = forged + "/" + HandoffReceipt.cosignedFile
        var note = try SignedNote(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: cosignedPath))))
        let checkpoint = try Checkpoint(parsing: note.text + "\n" + note.signatures[0].line)
        note.signatures[1] = try Cosignature.sign(
            checkpoint, name: note.signatures[1].name, key: try CheckpointKey.load(from: f.teams.sender), timestamp: 1_795_000_000)
        try Data(note.serialized.utf8).write(to: URL(fileURLWithPath: cosignedPath))
        let forgery = try handover("handoff", "confirm", forged, "--recipient-key", f.recipientKey, "--ledger", f.teams.sender)
        #expect(forgery.status == 2 && forgery.err.contains("receipt refused (cosignature)"), "\(forgery.err)")
        // Checked with a key that is not team B's.
        let wrong = try Fixture.exportKey(of: f.teams.sender, to: f.teams.dir.sub("not-b.pub"))
        let wrongKey = try handover("handoff", "confirm", receipt, "--recipient-key", wrong, "--ledger", f.teams.sender)
        #expect(wrongKey.status == 2 && wrongKey.err.contains("receipt refused (recipient-checkpoint)"), "\(wrongKey.err)")
        #expect(try f.events("handoff-acknowledged", in: f.teams.sender).isEmpty, "nothing recorded for a refused receipt")

        // The genuine receipt, confirmed twice, is recorded once.
        let first = try handover("handoff", "confirm", receipt, "--recipient-key", f.recipientKey, "--ledger", f.teams.sender)
        #expect(first.status == 0 && first.out.contains("(handoff acknowledged)"), "\(first.out)\(first.err)")
        let again = try handover("handoff", "confirm", receipt, "--recipient-key", f.recipientKey, "--ledger", f.teams.sender)
        #expect(again.status == 0 && again.out.contains("already recorded"), "\(again.out)\(again.err)")
        let acknowledged = try f.events("handoff-acknowledged", in: f.teams.sender)
        #expect(acknowledged.count == 1)
        let body = acknowledged.first?["body"] as? [String: Any]
        let issued = try f.events("handoff-issued", in: f.teams.sender).first?["body"] as? [String: Any]
        #expect(body?["manifest_sha256"] as? String == issued?["manifest_sha256"] as? String && body?["package"] as? Int == 1)

        // Both signatures checked by an implementation written from the documents alone.
        let checker = SignedHandoffTests.repository + "/tools/check-handoff.py"
        let package = try runCommand("/usr/bin/env", ["python3", checker, "package", f.package, "--sender-key", f.senderKey])
        #expect(package.status == 0, "check-handoff.py package: \(package.out)\(package.err)")
        let theirs = try runCommand(
            "/usr/bin/env",
            ["python3", checker, "receipt", receipt, "--recipient-key", f.recipientKey, "--package", f.package, "--sender-key", f.senderKey])
        #expect(theirs.status == 0, "check-handoff.py receipt: \(theirs.out)\(theirs.err)")
        for copy in flips.indices.map({ f.teams.dir.sub("receipt-flipped-\($0)") }) + [forged] {
            let refused = try runCommand(
                "/usr/bin/env",
                ["python3", checker, "receipt", copy, "--recipient-key", f.recipientKey, "--package", f.package, "--sender-key", f.senderKey])
            #expect(refused.status == 1, "check-handoff.py refuses \(copy): \(refused.out)\(refused.err)")
        }
        let otherKey = try runCommand("/usr/bin/env", ["python3", checker, "package", f.package, "--sender-key", f.recipientKey])
        #expect(otherKey.status == 1, "check-handoff.py refuses the manifest under another key: \(otherKey.out)\(otherKey.err)")
    }

    @Test("a bare CSV still works, recorded as unsigned; a package without a pinned key is refused; a dry run checks a package and records nothing")
    func bareCSV() throws {
        let h = try Fixture(users: 4)
        let f = h.teams
        let withoutKey = try h.exchange(h.package)
        #expect(withoutKey.status == 2 && withoutKey.err.contains("--sender-key"), "\(withoutKey.err)")
        let dryRun = try handover(
            ["exchange", "--ledger", f.recipient, "--transfers", h.package, "--sender-key", h.senderKey, "--out", f.output, "--dry-run"]
                + f.credentials("BBBB222222", "KEYB222222"))
        #expect(dryRun.status == 0 && dryRun.out.contains("signed package 1"), "\(dryRun.out)\(dryRun.err)")
        #expect(
            try h.events("handoff-received", in: f.recipient).isEmpty && h.events("handoff-refused", in: f.recipient).isEmpty,
            "a dry run records nothing")
        let run = try handover(
            ["exchange", "--ledger", f.recipient, "--transfers", f.handoff, "--out", f.output] + f.credentials("BBBB222222", "KEYB222222"))
        #expect(run.status == 0 && run.out.contains("recorded as unsigned"), "\(run.out)\(run.err)")
        let started = try handover("query", "events", "--type", "run-started", "--format", "json", "--ledger", f.recipient)
        #expect(started.out.contains("\"handoff\":\"unsigned\""), "\(started.out)")
        // A package without a pinned key, and a pinned key with a bare CSV, are usage errors.
        let keyWithCSV = try handover(
            ["exchange", "--ledger", f.recipient, "--transfers", f.handoff, "--out", f.output, "--sender-key", f.handoff]
                + f.credentials("BBBB222222", "KEYB222222"))
        #expect(keyWithCSV.status == 2, "\(keyWithCSV.err)")
    }

    /// Changes one byte in the middle of line `line` (from 0) of the file at `path`, keeping it a
    /// base64 or text character.
    @Test(
        "a package's rows are kept beside team B's events, proven by the manifest's root, and verify; a v1 package from an older sender is received as before"
    )
    func rowsForms() async throws {
        let f = try Fixture(users: 5)
        let manifest = try HandoffManifest(
            text: try SignedNote(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: f.package + "/" + HandoffPackage.manifestFile)))).text)
        #expect(manifest.rowsForm == .v2 && manifest.text.hasPrefix("handover-handoff/v2\n"))
        let lines = try String(contentsOfFile: f.package + "/" + HandoffPackage.rowsFile, encoding: .utf8).components(separatedBy: "\r\n")
            .filter { !$0.isEmpty }.dropFirst()
        #expect(manifest.rowsRoot == Hex.encode(RowTree(kind: .handoffRow, rows: lines.map { Array($0.utf8) }).root.bytes))

        // The same rows as an older sender wrote them: no salt, no root.
        let older = try f.resigned(
            "handoff-v1",
            rows: { text in
                text.replacingOccurrences(of: "account_id,transfer_sub,seq,salt", with: "account_id,transfer_sub,seq")
                    .replacing(#/,[0-9a-f]{32}\r\n/#, with: "\r\n")
            }
        ) { $0.rowsRoot = nil }
        #expect(try String(contentsOfFile: older + "/" + HandoffPackage.manifestFile, encoding: .utf8).hasPrefix("handover-handoff/v1\n"))
        let checker = SignedHandoffTests.repository + "/tools/check-handoff.py"
        for package in [f.package, older] {
            let checked = try runCommand("/usr/bin/env", ["python3", checker, "package", package, "--sender-key", f.senderKey])
            #expect(checked.status == 0, "check-handoff.py package \(package): \(checked.out)\(checked.err)")
        }

        // Each into a recipient ledger of its own: the v2 rows beside their event, the v1 rows in it.
        let copy = f.teams.dir.sub("b-v1")
        try FileManager.default.copyItem(atPath: f.teams.recipient, toPath: copy)
        let receivedV2 = try handover("handoff", "receive", f.package, "--sender-key", f.senderKey, "--ledger", f.teams.recipient)
        #expect(receivedV2.status == 0, "\(receivedV2.out)\(receivedV2.err)")
        let receivedV1 = try handover("handoff", "receive", older, "--sender-key", f.senderKey, "--ledger", copy)
        #expect(receivedV1.status == 0, "\(receivedV1.out)\(receivedV1.err)")
        let v2 = try f.events("handoff-rows-received", in: f.teams.recipient).compactMap { $0["body"] as? [String: Any] }
        #expect(v2.count == 1 && v2.first?["rows"] as? Int == 5 && v2.first?["rows_root"] as? String == manifest.rowsRoot)
        #expect(v2.first?["account_ids"] == nil && v2.first?["transfer_subs"] == nil)
        let v1 = try f.events("handoff-rows-received", in: copy).compactMap { $0["body"] as? [String: Any] }
        #expect(v1.count == 1 && (v1.first?["transfer_subs"] as? [String])?.count == 5 && v1.first?["rows_root"] == nil)
        for ledger in [f.teams.recipient, copy] {
            let verified = try handover("verify", "--ledger", ledger)
            #expect(verified.status == 0 && verified.out.contains("OK: 1 handoff of 5 rows"), "\(ledger): \(verified.out)\(verified.err)")
            let user = try handover("query", "user", "acct-2", "--ledger", ledger, "--format", "json")
            #expect(user.status == 0 && user.out.contains("\"received\""), "\(ledger): \(user.out)\(user.err)")
        }
    }

    static func flipByte(in path: String, line: Int) throws {
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let starts = [0] + bytes.indices.filter { bytes[$0] == 0x0A }.map { $0 + 1 }
        let end = line + 1 < starts.count ? starts[line + 1] - 1 : bytes.count
        let index = (starts[line] + end) / 2
        bytes[index] = bytes[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// The repository's root, for its `tools/`.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
}
