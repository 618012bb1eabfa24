import Basics
import Foundation
import LMDB
import Ledger
import Projections
import TestSupport
import Testing

/// A ledger written by the code before ledger format 2 and projection layout 2
/// (`Tests/Fixtures/format1`, made by `Tests/Fixtures/make-format1-ledger.sh` with commit
/// d087e5e), opened, and so upgraded, by this code.
@Suite("ledgers written in format 1, before format 2 and projection layout 2")
struct FormatUpgradeTests {
    let dir = TemporaryDirectory()
    static let fixture = Fixture("format1")

    /// A fresh copy of the old ledger.
    private func oldLedger(_ name: String) throws -> String {
        let path = dir.sub(name)
        try FileManager.default.copyItem(atPath: Self.fixture.path + "/ledger", toPath: path)
        return path
    }

    /// `output` of this code as the old code wrote it: through the list of renamed columns
    /// (``AnswerRename``), without the user's history and the columns added since
    /// (``OlderAnswers``), and with a failure's
    /// HTTP tries and an erasure's keys worded as they were ("after 1 attempt(s)", "1 key(s) destroyed").
    private func asOldCode(_ output: String, answer: String) throws -> String {
        switch answer {
        case "user" where !output.isEmpty, "report" where !output.isEmpty:
            var value = try JSONValue.parse(Array(output.utf8))
            guard case .object(var fields) = value else { return output }
            fields["history"] = nil
            fields = OlderAnswers.withoutAddedMembers(.object(fields)).objectValue ?? fields
            for (key, table) in ["failures_by_class": "failures by class", "notifications_by_type": "report: notifications by type"] {
                guard let rows = fields[key]?.arrayValue else { continue }
                fields[key] = .array(
                    rows.map { row in
                        .object(
                            Dictionary(
                                uniqueKeysWithValues: (row.objectValue ?? [:]).map { (AnswerRename.oldNames([$0.key], of: table)[0], $0.value) }))
                    })
            }
            value = .object(fields)
            return String(decoding: InertText.json(value.canonicalBytes), as: UTF8.self) + "\n"
        default:
            let output = OlderAnswers.withoutAddedColumns(csv: output)
            guard let end = output.range(of: "\r\n") else { return output }
            let header = CSVField.line(AnswerRename.oldNames(output[..<end.lowerBound].components(separatedBy: ","), of: answer))
            var rest = String(output[end.upperBound...])
            for tries in 1...9 {
                rest = rest.replacingOccurrences(of: "after \(tries) HTTP \(tries == 1 ? "try" : "tries")", with: "after \(tries) attempt(s)")
            }
            for keys in 0...9 {
                rest = rest.replacingOccurrences(of: "), \(keys) \(keys == 1 ? "key" : "keys") destroyed", with: "), \(keys) key(s) destroyed")
            }
            return header + rest
        }
    }

    /// Every answer the old code gave, asked again of `ledger`: the same rows, through the
    /// renamed columns (``asOldCode(_:answer:)``).
    private func expectOldAnswers(_ ledger: String) throws {
        let times = try Self.fixture.text("as-of-times.txt").split(separator: "\n").map(String.init)
        #expect(times.count == 4)
        let user = try Self.fixture.text("user.txt").trimmingCharacters(in: .whitespacesAndNewlines)
        for (n, time) in times.enumerated() {
            var asked: [(file: String, answer: String, arguments: [String])] = ["migrated", "pending", "state", "failures", "unmatched"].map {
                ("\($0)-\(n).csv", $0, ["query", $0, "--format", "csv"])
            }
            asked.append(("failures-by-class-\(n).csv", "failures by class", ["query", "failures", "--by-class", "--format", "csv"]))
            asked.append(("user-\(n).json", "user", ["query", "user", user, "--format", "json"]))
            asked.append(("report-\(n).json", "report", ["report", "--format", "json"]))
            for (file, answer, arguments) in asked {
                let r = try handover(arguments + ["--ledger", ledger, "--as-of", time])
                #expect(try asOldCode(r.out, answer: answer) == (try Self.fixture.text("answers/" + file)), "\(file) as of \(time): \(r.err)")
            }
        }
        for q in ["migrated", "state", "unmatched"] {
            #expect(
                try asOldCode(try handover(["query", q, "--ledger", ledger, "--format", "csv"]).out, answer: q)
                    == (try Self.fixture.text("answers/\(q)-now.csv")), "\(q) now")
        }
        #expect(
            try asOldCode(try handover(["query", "events", "--ledger", ledger, "--format", "csv"]).out, answer: "events")
                == (try Self.fixture.text("answers/events.csv")))
    }

    @Test(
        "read as it is, a format-1 ledger verifies and changes no byte, and a query says to run handover upgrade; upgraded (indexes, projections, verifier key), it verifies, proves against a checkpoint signed before, and answers as the old code did"
    )
    func upgrade() throws {
        let ledger = try oldLedger("l")
        let checkpoint = Self.fixture.path + "/checkpoint.txt"
        let before = try fileStates(ledger)
        var r = try handover(["verify", "--ledger", ledger])
        #expect(r.status == 0 && r.out.hasPrefix("OK: "), "\(r.out)\(r.err)")
        r = try handover(["query", "state", "--ledger", ledger])
        #expect(
            r.status == 2 && r.err.contains("run `handover upgrade --ledger \(ledger)`") && r.err.split(separator: "\n").count == 1,
            "\(r.out)\(r.err)")
        #expect(try fileStates(ledger) == before, "reading the old ledger changed none of its files")

        r = try handover(["upgrade", "--ledger", ledger])
        #expect(
            r.status == 0 && r.out.contains("format 1 to 2") && r.out.contains("projections: folded")
                && r.out.contains("verifier key: written to checkpoint.pub") && r.out.contains("person index: built over "), "\(r.out)\(r.err)")
        r = try handover(["upgrade", "--ledger", ledger])
        #expect(r.status == 0 && r.out.contains("is up to date"), "\(r.out)\(r.err)")
        r = try handover(["verify", "--ledger", ledger, "--checkpoint", checkpoint])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        r = try handover(["prove", "5", "--ledger", ledger, "--checkpoint", checkpoint])
        #expect(r.status == 0 && r.out.contains("\"sequence\":5"), "\(r.out)\(r.err)")
        try expectOldAnswers(ledger)
        // The old index and projection databases are gone, the new ones are there, the marker says 2.
        let environment = try Environment(path: ledger, options: .init(readOnly: true))
        let (present, format) = try environment.read { txn in
            let names = [
                "idx_identifier", "idx_type", "idx_time", "idempotency", "type_index", "time_index", "idempotency_index",
                "users", "user_ids", "projection_meta", "user_versions", "user_links", "migrated_order", "windows", "projection_state",
            ]
            let present = try names.filter { name in
                do {
                    _ = try txn.openDatabase(name, create: false)
                    return true
                } catch let error as LMDBError where error.code == .notFound { return false }
            }
            let format = try txn.get(try txn.openDatabase("meta", create: false), key: Array("format".utf8)).map {
                String(decoding: $0, as: UTF8.self)
            }
            return (present, format)
        }
        #expect(
            present == [
                "type_index", "time_index", "idempotency_index", "user_versions", "user_links", "migrated_order", "windows", "projection_state",
            ])
        #expect(format == "handover-ledger/3")
    }

    @Test(
        "the old key store's keys move into slots at the first open, its LMDB file keeps no copy of them, and an erased user's key is then in no file"
    )
    func keyStoreUpgrade() throws {
        let ledger = try oldLedger("keys")
        let keys = try Environment(path: ledger + "/keys", options: .init(readOnly: true)).read { txn in
            try txn.withCursor(try txn.openDatabase("keys", create: false)) { cursor in
                var keys: [[UInt8]] = []
                var entry = try cursor.first()
                while let (_, key) = entry {
                    keys.append(Array(key))
                    entry = try cursor.next()
                }
                return keys
            }
        }
        #expect(keys.count > 1 && keys.allSatisfy { $0.count == 32 })
        func holders(_ key: [UInt8]) throws -> [String] {
            try FileManager.default.subpathsOfDirectory(atPath: ledger).sorted().filter { name in
                FileManager.default.contents(atPath: ledger + "/" + name)?.range(of: Data(key)) != nil
            }
        }
        #expect(try keys.allSatisfy { try holders($0) == ["keys/data.mdb"] }, "the old layout keeps keys in LMDB")

        let upgraded = try handover(["upgrade", "--ledger", ledger])
        #expect(upgraded.status == 0 && upgraded.out.contains("key store: data keys moved into the slot file"), "\(upgraded.out)\(upgraded.err)")
        #expect(try keys.allSatisfy { try holders($0) == ["keys/slots"] }, "after the upgrade only the slot file holds them")
        try expectOldAnswers(ledger)

        let user = try Self.fixture.text("user.txt").trimmingCharacters(in: .whitespacesAndNewlines)
        let erased = try handover(["erase", user, "--ledger", ledger])
        #expect(erased.status == 0, "\(erased.err)")
        let left = try keys.filter { try !holders($0).isEmpty }
        #expect(left.count < keys.count, "the erased user's key is gone")
        #expect(try left.allSatisfy { try holders($0) == ["keys/slots"] })
    }

    @Test(
        "the format-1 ledger upgraded bundles its user's evidence: evidence verify and check-bundle.py accept it, its story every event proven"
    )
    func upgradedBundles() throws {
        let ledger = try oldLedger("bundled")
        #expect(try handover(["upgrade", "--ledger", ledger]).status == 0)
        #expect(try handover(["checkpoint", "--ledger", ledger]).status == 0)
        let subject = try String(contentsOfFile: Self.fixture.path + "/user.txt", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let bundle = dir.sub("bundle")
        let written = try handover(["evidence", subject, "--ledger", ledger, "--out", bundle])
        #expect(written.status == 0, "\(written.out)\(written.err)")
        let checked = try handover(["evidence", "verify", bundle])
        #expect(checked.status == 0 && checked.out.contains("\n  proven  event ") && !checked.out.contains("stated"), "\(checked.out)\(checked.err)")
        // The upgrade built the person index, the checkpoint committed it: the history is proven whole.
        #expect(checked.out.contains("\nComplete: the events and rows shown are every event and row of the log's first "), "\(checked.out)")
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let theirs = try runCommand("/usr/bin/env", ["python3", repository + "/tools/check-bundle.py", bundle])
        #expect(theirs.status == 0, "\(theirs.out)\(theirs.err)")
    }

    @Test("a format-1 ledger compacted before its upgrade keeps its log, head and answers: the upgrade then answers as the old code did")
    func compactedBeforeUpgrade() throws {
        let ledger = try oldLedger("compacted")
        let compacted = try handover(["compact", "--ledger", ledger])
        #expect(compacted.status == 0 && compacted.out.contains("events 1 to 154"), "\(compacted.out)\(compacted.err)")
        #expect(try handover(["upgrade", "--ledger", ledger]).status == 0)
        try expectOldAnswers(ledger)
    }

    @Test(
        "handover upgrade killed with SIGKILL while it upgrades (5 kills; 10 at full size): run again, the ledger verifies and answers as the old code did"
    )
    func upgradeKilled() throws {
        let times = try Self.fixture.text("as-of-times.txt").split(separator: "\n").map(String.init)
        // Killed at a random moment within the time an upgrade takes on this machine, as busy as
        // it is now. A kill counts when the upgrade run again still had something to do: the
        // killed one had begun and not finished.
        let timed = try oldLedger("timed")
        let start = DispatchTime.now()
        #expect(try handover(["upgrade", "--ledger", timed]).status == 0)
        let took = UInt32(min(2_000_000, max(1_000, (DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000)))
        let wanted = TestSize.pick(quick: 5, full: 10)
        var landed = 0
        var round = 0
        while landed < wanted, round < 6 * wanted {
            round += 1
            let ledger = try oldLedger("k\(round)")
            let killed = try handoverKilled(["upgrade", "--ledger", ledger], within: took)
            let again = try handover(["upgrade", "--ledger", ledger])
            #expect(again.status == 0, "round \(round): \(again.out)\(again.err)")
            if killed, !again.out.contains(" is up to date ") { landed += 1 }
            let r = try handover(["verify", "--ledger", ledger, "--checkpoint", Self.fixture.path + "/checkpoint.txt"])
            #expect(r.status == 0, "round \(round): \(r.out)\(r.err)")
            #expect(
                try asOldCode(try handover(["query", "state", "--ledger", ledger, "--format", "csv"]).out, answer: "state")
                    == (try Self.fixture.text("answers/state-now.csv")), "round \(round)")
            #expect(
                try asOldCode(
                    try handover(["query", "migrated", "--ledger", ledger, "--format", "csv", "--as-of", times[2]]).out, answer: "migrated")
                    == (try Self.fixture.text("answers/migrated-2.csv")), "round \(round)")
            if landed == wanted {
                try expectOldAnswers(ledger)
                let deep = try handover(["verify", "--ledger", ledger, "--deep"])
                #expect(deep.status == 0 && deep.out.contains("OK: the person index ("), "round \(round): \(deep.out)\(deep.err)")
            }
        }
        #expect(landed >= wanted, "\(PhaseKill.tally(landed, of: round, in: "while it upgraded"))")
    }

    @Test(
        "projections of an older layout beside 12,001 events: handover upgrade loads them in key order; killed with SIGKILL while it loads (3 kills; 6 at full size) and run again, it ends with the projections the log implies and the same answers"
    )
    func upgradeLoadKilled() throws {
        let original = dir.sub("loaded")
        let appended = try runProduct("handover-lab", ["append", "--ledger", original, "--count", "12000", "--prefix", "u", "--create"])
        #expect(appended.status == 0, "\(appended.err)")
        let state = try handover(["query", "state", "--ledger", original, "--format", "csv"])
        #expect(state.status == 0 && state.out.utf8.filter { $0 == UInt8(ascii: "\n") }.count == 12_001, "a header and 12,000 users")
        let forgot = try runProduct("handover-lab", ["forget-projections", "--ledger", original])
        #expect(forgot.status == 0, "\(forgot.err)")
        #expect(
            try handover(["query", "state", "--ledger", original, "--format", "csv"]).err.contains("handover upgrade"),
            "read-only, the older layout needs the upgrade")
        func copy(_ name: String) throws -> String {
            let path = dir.sub(name)
            try FileManager.default.copyItem(atPath: original, toPath: path)
            return path
        }
        let taken = try copy("existing-scratch")
        #expect(try handover(["upgrade", "--ledger", original, "--scratch", taken]).status == 2, "an existing --scratch is refused")
        let timed = try copy("timed")
        let upgraded = try handover(["upgrade", "--ledger", timed, "--scratch", dir.sub("scratch-timed")])
        #expect(upgraded.status == 0 && upgraded.out.contains("projections: loaded 12001 events in key order"), "\(upgraded.out)\(upgraded.err)")
        #expect(!FileManager.default.fileExists(atPath: dir.sub("scratch-timed")), "the scratch directory is removed")
        // The scratch directory exists while the load folds: a kill is sent within 50 ms of its
        // appearing, and counts when the killed upgrade left it behind.
        let wanted = TestSize.pick(quick: 3, full: 6)
        var landed = 0
        var round = 0
        while landed < wanted, round < 4 * wanted {
            round += 1
            let ledger = try copy("k\(round)")
            let scratch = dir.sub("scratch-k\(round)")
            let process = try RunningProduct("handover", ["upgrade", "--ledger", ledger, "--scratch", scratch])
            let ended = PhaseKill.kill(process, once: { FileManager.default.fileExists(atPath: scratch) }, spread: 50_000)
            if ended.signalled, FileManager.default.fileExists(atPath: scratch) { landed += 1 }
            let again = try handover(["upgrade", "--ledger", ledger, "--scratch", dir.sub("scratch-again-\(round)")])
            #expect(again.status == 0, "round \(round): \(again.out)\(again.err)")
            #expect(
                again.out.contains("projections: loaded 12001 events in key order") || again.out.contains("is up to date"),
                "round \(round): the load is run again, not left to the fold event by event: \(again.out)\(again.err)")
            let deep = try handover(["verify", "--deep", "--ledger", ledger])
            #expect(deep.status == 0, "round \(round): \(deep.out)\(deep.err)")
            #expect(try handover(["query", "state", "--ledger", ledger, "--format", "csv"]).out == state.out, "round \(round)")
            try? FileManager.default.removeItem(atPath: scratch)
        }
        #expect(landed >= wanted, "\(PhaseKill.tally(landed, of: round, in: "while its load folded"))")
    }

    @Test(
        "a command that writes, started while handover upgrade loads the projections, waits for that load instead of starting its own, then appends; the projections end as the log implies"
    )
    func writerDuringUpgradeLoad() throws {
        let ledger = dir.sub("busy")
        #expect(try runProduct("handover-lab", ["append", "--ledger", ledger, "--count", "12000", "--prefix", "u", "--create"]).status == 0)
        #expect(try runProduct("handover-lab", ["forget-projections", "--ledger", ledger]).status == 0)
        let lock = ledger + "/bulk-load.lock"
        #expect(!FileManager.default.fileExists(atPath: lock))
        let upgrade = try RunningProduct("handover", ["upgrade", "--ledger", ledger])
        // The lock file appears when the upgrade takes the lock, before its load begins.
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: lock), Date() < deadline { usleep(2_000) }
        let writer = try runProduct("handover-lab", ["append", "--ledger", ledger, "--count", "50", "--prefix", "late"])
        #expect(writer.status == 0, "\(writer.err)")
        #expect(!writer.err.contains("in bulk failed"), "the writer started no load of its own: \(writer.err)")
        let upgraded = upgrade.wait()
        #expect(upgraded.status == 0 && upgraded.out.contains("projections: loaded 12001 events in key order"), "\(upgraded.out)\(upgraded.err)")
        let deep = try handover(["verify", "--deep", "--ledger", ledger])
        #expect(deep.status == 0 && deep.out.contains("through event 12051"), "\(deep.out)\(deep.err)")
        let state = try handover(["query", "state", "--ledger", ledger, "--format", "csv"])
        #expect(state.out.utf8.filter { $0 == UInt8(ascii: "\n") }.count == 12_051, "a header and 12,050 users")
    }

    @Test(
        "a scratch directory on a disk without room for the fold: projections rebuild refuses it in plain words and leaves the projections as they were; handover upgrade folds event by event instead",
        .enabled(if: SmallDisk.canMount, "needs to mount a tmpfs (root, and a container that allows mount); skipped here"))
    func scratchWithoutRoom() throws {
        let ledger = dir.sub("roomless")
        #expect(try runProduct("handover-lab", ["append", "--ledger", ledger, "--count", "12000", "--prefix", "u", "--create"]).status == 0)
        let small = dir.sub("small")
        try #require(try SmallDisk.mount(size: "2m", at: small))
        defer { SmallDisk.unmount(small) }
        let state = try handover(["query", "state", "--ledger", ledger, "--format", "csv"]).out
        let rebuild = try handover(["projections", "rebuild", "--ledger", ledger, "--scratch", small + "/rebuild"])
        #expect(
            rebuild.status != 0 && rebuild.err.contains("needs about") && rebuild.err.contains("on a disk with room"), "\(rebuild.out)\(rebuild.err)")
        #expect(!FileManager.default.fileExists(atPath: small + "/rebuild"), "the refused directory is removed")
        #expect(try handover(["query", "state", "--ledger", ledger, "--format", "csv"]).out == state)
        #expect(try runProduct("handover-lab", ["forget-projections", "--ledger", ledger]).status == 0)
        let upgraded = try handover(["upgrade", "--ledger", ledger, "--scratch", small + "/upgrade"])
        #expect(upgraded.status == 0 && upgraded.out.contains("projections: folded 12001 events"), "\(upgraded.out)\(upgraded.err)")
        #expect(upgraded.err.contains("needs about"), "the fallback says why: \(upgraded.err)")
        #expect(try handover(["query", "state", "--ledger", ledger, "--format", "csv"]).out == state)
        #expect(try handover(["verify", "--deep", "--ledger", ledger]).status == 0)
    }
}
