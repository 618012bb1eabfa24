import Basics
import Foundation
import LedgerSamples
import TestSupport
import Testing

@testable import Ledger
@testable import Projections
@testable import Reporting

/// A person's row of a handoff package in their evidence bundle: proven alone, with nobody
/// else's identifier, row or sealed value in any file, and every alteration of the row, its
/// paths, its roots or the story's facts refused by both checks, naming the file.
extension EvidenceBundleTests {
    /// Each person of the demo as a set of what identifies them in either ledger (account ID,
    /// both teams' subs, transfer_sub, email), joined by the transfer_sub.
    private func people(sender: String, recipient: String) throws -> [Set<String>] {
        var byTransferSub: [String: Set<String>] = [:]
        var alone: [Set<String>] = []
        for user in try users(sender) + users(recipient) {
            let values = Set(
                ["account_id", "sender_sub", "recipient_sub", "transfer_sub", "email"].compactMap { user[$0]?.stringValue }.filter { !$0.isEmpty })
            if let transferSub = user["transfer_sub"]?.stringValue {
                byTransferSub[transferSub, default: []].formUnion(values)
            } else {
                alone.append(values)
            }
        }
        return Array(byTransferSub.values) + alone
    }

    /// Every file under `directory`, one after the other, a NUL between two.
    private func contents(of directory: String) throws -> [UInt8] {
        let files = FileManager.default.enumerator(atPath: directory)!.compactMap { $0 as? String }.sorted()
        return try files.flatMap { file -> [UInt8] in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory + "/" + file, isDirectory: &isDirectory), !isDirectory.boolValue else { return [] }
            return Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))) + [0]
        }
    }

    /// The sealed values (`"ct"` strings) in `bytes`.
    private func sealedValues(in bytes: [UInt8]) -> Set<String> {
        let text = String(decoding: bytes, as: UTF8.self)
        return Set(
            text.components(separatedBy: "\"ct\":\"").dropFirst().compactMap { $0.split(separator: "\"", maxSplits: 1).first.map(String.init) })
    }

    /// Strings to look for, each with the person it belongs to, found by their first 8 bytes
    /// at every offset of a file (every string looked for is longer).
    private struct Needles {
        private var byPrefix: [UInt64: [(bytes: [UInt8], owner: Int)]] = [:]

        mutating func add(_ needle: String, owner: Int) {
            let bytes = Array(needle.utf8)
            precondition(bytes.count >= 8, "\(needle) is shorter than the 8 bytes it is found by")
            byPrefix[bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }, default: []].append((bytes, owner))
        }

        /// The strings of owners other than `owner` that occur in `haystack`.
        func others(than owner: Int, in haystack: [UInt8]) -> Set<String> {
            var found = Set<String>()
            haystack.withUnsafeBytes { raw in
                for i in stride(from: 0, to: raw.count - 7, by: 1) {
                    guard let candidates = byPrefix[raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)] else { continue }
                    for candidate in candidates where candidate.owner != owner && raw[i...].starts(with: candidate.bytes) {
                        found.insert(String(decoding: candidate.bytes, as: UTF8.self))
                    }
                }
            }
            return found
        }
    }

    @Test(
        "200 people's two-sided bundles: both checks accept each and print the person's row as proven; no other person's account_id, sub, transfer_sub, email or sealed value is in any file of any of them"
    )
    func nobodyElseInABundle() throws {
        let (sender, recipient) = try demo()
        let senderKey = try DemoLedger.copy(file: "sender.pub", into: dir)
        let recipientKey = try DemoLedger.copy(file: "recipient.pub", into: dir)
        let senderLine = try String(contentsOfFile: senderKey, encoding: .utf8)
        let recipientLine = try String(contentsOfFile: recipientKey, encoding: .utf8)
        let everyone = try people(sender: sender, recipient: recipient)
        let chosen = Array(try users(recipient).compactMap { $0["transfer_sub"]?.stringValue }.prefix(200))
        try #require(chosen.count == 200, "the demo's team B knows at least 200 people by transfer_sub")
        let root = dir.sub("people")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for (i, person) in chosen.enumerated() {
            let bundle = "\(root)/\(i)"
            let written = try handover(["evidence", person, "--ledger", recipient, "--sender", sender, "--out", bundle])
            try #require(written.status == 0, "\(person): \(written.out)\(written.err)")
            let checked = try TwoSidedEvidenceCheck.run(bundle, senderKey: senderLine, recipientKey: recipientLine)
            #expect(
                checked.recipient.story.contains { $0.fact.kind == .row && $0.fact.proven && $0.line.contains("transfer_sub \(person) (in event ") },
                "\(person)'s row is proven in the story: \(checked.recipient.story.map(\.line))")
        }
        // The independent checker on every bundle, its command line run in one Python process.
        let loop = """
            import contextlib, importlib.util, io, os, sys
            spec = importlib.util.spec_from_file_location("check_bundle", sys.argv[1])
            checker = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(checker)
            root, sender_key, recipient_key = sys.argv[2:5]
            for name in sorted(os.listdir(root)):
                sys.argv[:] = ["check-bundle.py", os.path.join(root, name), "--sender-key", sender_key, "--recipient-key", recipient_key]
                said = io.StringIO()
                with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
                    status = checker.main()
                if status != 0:
                    print(name, said.getvalue())
                    sys.exit(1)
            """
        let theirs = try runCommand(
            "/usr/bin/env", ["python3", "-c", loop, Self.repository + "/tools/check-bundle.py", root, senderKey, recipientKey])
        #expect(theirs.status == 0, "check-bundle.py refused \(theirs.out)\(theirs.err)")

        // Every person's identifiers, and the sealed values of each chosen person's own bundle.
        let bundles = try chosen.indices.map { try contents(of: "\(root)/\($0)") }
        let owners = try chosen.map { person in try #require(everyone.firstIndex { $0.contains(person) }) }
        var needles = Needles()
        for (owner, identifiers) in everyone.enumerated() { for identifier in identifiers { needles.add(identifier, owner: owner) } }
        var sealedCount = 0
        for (i, bundle) in bundles.enumerated() {
            for value in sealedValues(in: bundle) {
                needles.add(value, owner: owners[i])
                sealedCount += 1
            }
        }
        #expect(sealedCount > 0, "the bundles hold sealed values to look for in the others")
        for (i, person) in chosen.enumerated() {
            let leaked = needles.others(than: owners[i], in: bundles[i])
            #expect(leaked.isEmpty, "\(person)'s bundle holds other people's \(leaked.sorted().prefix(5))")
            // The search finds what is there: the person's own transfer_sub, when not excluded.
            #expect(needles.others(than: -1, in: bundles[i]).contains(person), "\(person) is found in their own bundle")
        }
    }

    /// A copy of `bundle` named after `name`, changed by `change` (given the copy's directory).
    private func altered(_ bundle: String, _ name: String, _ change: (String) throws -> Void) throws -> String {
        let copy = dir.sub("altered-" + name.replacingOccurrences(of: " ", with: "-"))
        try FileManager.default.copyItem(atPath: bundle, toPath: copy)
        try change(copy)
        return copy
    }

    /// Rewrites the JSON object in `path` (canonical, a line feed after) through `edit`.
    private func editJSON(_ path: String, _ edit: (inout [String: JSONValue]) throws -> Void) throws {
        var object = try #require(try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).objectValue)
        try edit(&object)
        try Data(JSONValue.object(object).canonicalBytes + [0x0A]).write(to: URL(fileURLWithPath: path))
    }

    @Test(
        "23 altered bundles (a package or apply row changed or taken out, a row swapped with another person's, a path shortened or lengthened, a root replaced, a fact claimed, dropped or reordered): evidence verify and check-bundle.py refuse each, naming the file"
    )
    func alteredRowsAndFactsRefused() throws {
        let (sender, recipient) = try demo()
        let keys = [
            "--sender-key", try DemoLedger.copy(file: "sender.pub", into: dir), "--recipient-key",
            try DemoLedger.copy(file: "recipient.pub", into: dir),
        ]
        // Two people exchanged and applied, listed in the same chunk of the same package.
        let applied = try users(recipient).filter { $0["apply_outcome"]?.stringValue == "applied" && $0["erased_at"]?.stringValue == nil }
            .compactMap { $0["transfer_sub"]?.stringValue }
        try #require(applied.count >= 2)
        let one = dir.sub("one")
        let other = dir.sub("other")
        let both = dir.sub("both")
        for (person, out) in [(applied[0], one), (applied[1], other)] {
            #expect(try handover(["evidence", person, "--ledger", recipient, "--out", out]).status == 0)
        }
        #expect(try handover(["evidence", applied[0], "--ledger", recipient, "--sender", sender, "--out", both]).status == 0)
        // The person's rows: of the package, and of the apply batch as intended and as settled.
        func file(of kind: String, in bundle: String) throws -> String {
            let names = try FileManager.default.contentsOfDirectory(atPath: bundle + "/rows").filter { name in
                (try? JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: bundle + "/rows/" + name)))))?["kind"]?.stringValue == kind
            }
            return "rows/" + (try #require(names.first, "\(bundle) holds a \(kind) row"))
        }
        let rowFile = try file(of: "handover-handoff-row/v1", in: one)
        let intendedFile = try file(of: "handover-apply-intended-row/v1", in: one)
        let settledFile = try file(of: "handover-apply-settled-row/v1", in: one)
        for name in [rowFile, settledFile] {
            #expect(FileManager.default.fileExists(atPath: other + "/" + name), "the other person's row is in the same event: \(name)")
        }
        let rowsEvent = "events/" + rowFile.dropFirst(5)
        let manifest = try #require(try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: one + "/manifest.json")))).objectValue)
        let facts = try #require(manifest["facts"]?.arrayValue)
        let received = try #require(
            try FileManager.default.contentsOfDirectory(atPath: one + "/events").first { name in
                (try? JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: one + "/events/" + name)))))?["type"]?.stringValue
                    == "handoff-received"
            })
        let sequences = facts.compactMap { $0["seq"]?.intValue }.filter { !FileManager.default.fileExists(atPath: one + "/rows/\($0).json") }
        let laterEvent = try #require(sequences.max(), "an event without a row")

        func row(_ edit: @escaping (inout [String: JSONValue]) -> Void) -> (String) throws -> Void { { try self.editJSON($0 + "/" + rowFile, edit) } }
        func factsOf(_ edit: @escaping (inout [JSONValue]) -> Void) -> (String) throws -> Void {
            { copy in
                try self.editJSON(copy + "/manifest.json") { m in
                    var f = m["facts"]!.arrayValue!
                    edit(&f)
                    m["facts"] = .array(f)
                }
            }
        }
        func replacing(_ old: String, _ new: String, in text: String) -> String {
            guard let r = text.range(of: old) else { return text }
            return text.replacingCharacters(in: r, with: new)
        }
        let zero = JSONValue.string(String(repeating: "0", count: 64))
        func swapped(_ file: String, into bundle: String = "") -> (String) throws -> Void {
            { copy in
                try FileManager.default.removeItem(atPath: copy + bundle + "/" + file)
                try FileManager.default.copyItem(atPath: other + "/" + file, toPath: copy + bundle + "/" + file)
            }
        }
        let cases: [(name: String, bundle: String, file: String, change: (String) throws -> Void)] = [
            ("a row's account_id changed", one, rowFile, row { $0["row"] = .string(replacing("acct-", "acct-9", in: $0["row"]!.stringValue!)) }),
            (
                "a row's salt changed", one, rowFile,
                row { r in
                    let s = r["row"]!.stringValue!
                    r["row"] = .string(String(s.dropLast()) + (s.last == "0" ? "1" : "0"))
                }
            ),
            ("a row swapped with another person's", one, rowFile, swapped(rowFile)),
            ("a chunk path shortened", one, rowFile, row { r in r["chunk_path"] = .array(r["chunk_path"]!.arrayValue!.dropLast()) }),
            ("a chunk path hash replaced", one, rowFile, row { r in r["chunk_path"] = .array([zero] + r["chunk_path"]!.arrayValue!.dropFirst()) }),
            ("a package path lengthened", one, rowFile, row { r in r["package_path"] = .array(r["package_path"]!.arrayValue! + [zero]) }),
            ("the row's index changed", one, rowFile, row { r in r["index"] = .int(r["index"]!.intValue! + 1) }),
            ("another kind of row", one, rowFile, row { $0["kind"] = .string("handover-apply-row/v1") }),
            (
                "the rows event's root replaced", one, rowsEvent,
                { copy in
                    let path = copy + "/" + rowsEvent
                    let text = try String(contentsOfFile: path, encoding: .utf8)
                    let root = String(text.components(separatedBy: "\"rows_root\":\"")[1].prefix(64))
                    try replacing(root, String(repeating: "0", count: 64), in: text).write(toFile: path, atomically: false, encoding: .utf8)
                }
            ),
            (
                "an apply row's outcome changed", one, settledFile,
                {
                    try self.editJSON($0 + "/" + settledFile) {
                        $0["row"] = .string(replacing("\"applied\"", "\"already\"", in: $0["row"]!.stringValue!))
                    }
                }
            ),
            ("an apply row swapped with another person's", one, settledFile, swapped(settledFile)),
            (
                "an apply row taken out with its fact", one, "events/" + settledFile.dropFirst(5),
                { copy in
                    try FileManager.default.removeItem(atPath: copy + "/" + settledFile)
                    try factsOf { $0.removeAll { $0["file"]?.stringValue == settledFile } }(copy)
                }
            ),
            (
                "an apply intent's path shortened", one, intendedFile,
                { try self.editJSON($0 + "/" + intendedFile) { r in r["path"] = .array(r["path"]!.arrayValue!.dropLast()) } }
            ),
            ("a fact left out", one, "manifest.json", factsOf { $0.removeFirst() }),
            ("the story reordered", one, "manifest.json", factsOf { $0.swapAt(0, 1) }),
            ("the row's file removed", one, String(rowsEvent), { try FileManager.default.removeItem(atPath: $0 + "/" + rowFile) }),
            (
                "a proven row claimed where there is none", one, "manifest.json",
                factsOf { $0.append(.object(["seq": .int(laterEvent), "file": .string("rows/\(laterEvent).json"), "proven": .bool(true)])) }
            ),
            (
                "the row's file under another event's number", one, "rows/\(laterEvent).json",
                { try FileManager.default.moveItem(atPath: $0 + "/" + rowFile, toPath: $0 + "/rows/\(laterEvent).json") }
            ),
            (
                "the package's handoff received taken out", one, rowFile,
                { copy in
                    let seq = received.dropLast(5)
                    try FileManager.default.removeItem(atPath: copy + "/events/" + received)
                    try FileManager.default.removeItem(atPath: copy + "/proofs/\(seq).tlog-proof")
                    try self.editJSON(copy + "/manifest.json") { m in
                        m["events"] = .array(m["events"]!.arrayValue!.filter { "\($0["seq"]!.intValue!)" != seq })
                        m["facts"] = .array(m["facts"]!.arrayValue!.filter { "\($0["seq"]!.intValue!)" != seq })
                    }
                }
            ),
            (
                "two-sided: the recipient's row changed", both, "recipient/" + rowFile,
                { try row { $0["row"] = .string(replacing("acct-", "acct-9", in: $0["row"]!.stringValue!)) }($0 + "/recipient") }
            ),
            ("two-sided: the recipient's row swapped with another person's", both, "recipient/" + rowFile, swapped(rowFile, into: "/recipient")),
            (
                "two-sided: the intent of the recipient's apply row taken out", both, "recipient/" + settledFile,
                { copy in
                    let seq = intendedFile.dropFirst(5).dropLast(5)
                    try FileManager.default.removeItem(atPath: copy + "/recipient/" + intendedFile)
                    try factsOf { $0.removeAll { $0["file"]?.stringValue == "rows/\(seq).json" } }(copy + "/recipient")
                }
            ),
            (
                "two-sided: the signed manifest's rows-root replaced", both, "handoff/1/manifest.txt",
                { copy in
                    let path = copy + "/handoff/1/manifest.txt"
                    let text = try String(contentsOfFile: path, encoding: .utf8)
                    let root = String(text.components(separatedBy: "rows-root ")[1].prefix(64))
                    try replacing(root, String(repeating: "0", count: 64), in: text).write(toFile: path, atomically: false, encoding: .utf8)
                }
            ),
        ]
        #expect(cases.count >= 20)
        for c in cases {
            let copy = try altered(c.bundle, c.name, c.change)
            let ours = try handover(["evidence", "verify", copy] + (c.bundle == both ? keys : []))
            #expect(
                ours.status == 4 && ours.err.contains("the bundle does not hold: \(c.file): "),
                "\(c.name): evidence verify: \(ours.status) \(ours.out)\(ours.err)")
            let theirs = try pythonCheck(copy, c.bundle == both ? keys : [])
            #expect(
                theirs.status == 1 && (theirs.out + theirs.err).contains("FAIL: \(c.file)"), "\(c.name): check-bundle.py: \(theirs.out)\(theirs.err)")
        }
    }

    @Test(
        "a ledger whose apply batches hold their accounts in their JSON, as versions before 0.5.0 wrote them: it verifies and bundles, the person's apply row stated, those events left out; a statement presented as proven is refused by both checks"
    )
    func olderApplyBatchesStated() async throws {
        // The samples, their apply batches in the form written before rows were kept beside them
        // (without the samples' package, whose manifest is an abbreviation, not a signed one).
        var drafts = EventSamples.all().dropFirst().filter { ![.handoffReceived, .handoffRowsReceived, .personIndexCommitted].contains($0.type) }
        var intent: ApplyIntended?
        for i in drafts.indices {
            switch drafts[i].body {
            case .applyIntended(let b):
                // Those versions set the sub alone.
                intent = ApplyIntended(
                    batch: b.batch, rows: b.rows.map { ApplyIntended.Row(account: $0.account, cells: [$0.cell(.recipientSub)!]) })
                drafts[i].body = .applyIntended(intent!)
            case .applySettled(let b):
                drafts[i].body = .applySettled(
                    ApplySettled(
                        batch: b.batch, intentSHA256: try #require(intent).sha256, committed: b.committed, recovered: b.recovered, undo: b.undo,
                        rows: b.rows.map { row in ApplySettled.Row(account: row.account, outcomes: row.outcomes.filter { $0.column == .recipientSub })
                        }))
            default:
                break
            }
        }
        let path = dir.sub("older")
        let ledger = try await Ledger.create(at: path, testIdentity(), folders: [UserProjection()])
        _ = try await ledger.append(contentsOf: drafts)
        ledger.close()
        let deep = try handover(["verify", "--ledger", path, "--deep"])
        #expect(deep.status == 0, "\(deep.out)\(deep.err)")
        #expect(try handover(["checkpoint", "--ledger", path]).status == 0)
        let bundle = dir.sub("older-bundle")
        let written = try handover(["evidence", "acct-42", "--ledger", path, "--out", bundle])
        try #require(written.status == 0, "\(written.out)\(written.err)")
        let checked = try handover(["evidence", "verify", bundle])
        #expect(checked.status == 0, "\(checked.out)\(checked.err)")
        #expect(checked.out.contains("\n  stated  apply run run-4 batch 0 (event "), "the apply row stated: \(checked.out)")
        #expect(!checked.out.contains("proven  apply run"), "\(checked.out)")
        let types = try FileManager.default.contentsOfDirectory(atPath: bundle + "/events").compactMap { name in
            try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: bundle + "/events/" + name))))["type"]?.stringValue
        }
        #expect(!types.contains("apply-intended") && !types.contains("apply-settled"), "\(types)")
        #expect(try pythonCheck(bundle).status == 0)

        // The statement presented as proven.
        let claimed = try altered(bundle, "stated apply claimed proven") { copy in
            try self.editJSON(copy + "/manifest.json") { m in
                m["facts"] = .array(
                    m["facts"]!.arrayValue!.map { fact in
                        guard fact["file"]?.stringValue == "manifest.json" else { return fact }
                        return .object(["seq": fact["seq"]!, "file": .string("manifest.json"), "proven": .bool(true)])
                    })
            }
        }
        let ours = try handover(["evidence", "verify", claimed])
        #expect(ours.status == 4 && ours.err.contains("the bundle does not hold: manifest.json: "), "\(ours.out)\(ours.err)")
        let theirs = try pythonCheck(claimed)
        #expect(theirs.status == 1 && (theirs.out + theirs.err).contains("FAIL: manifest.json"), "\(theirs.out)\(theirs.err)")
    }
}
