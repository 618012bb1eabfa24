import Basics
import Crypto
import Foundation
import TestSupport
import Testing

@testable import Ledger
@testable import Reporting

/// A person's whole story: a bundle proves the events it shows are every one of theirs (the
/// person index), and a forger who edits a bundle and recomputes its manifests, holding no
/// signing key, cannot leave a line out, let another person's in, or relabel the person.
@Suite("a person's whole story, proven complete", .serialized)
struct BundleCompletenessTests {
    let dir = TemporaryDirectory()

    /// `tools/check-bundle.py` on `bundle`.
    func pythonCheck(_ bundle: String, _ options: [String] = []) throws -> (status: Int32, out: String, err: String) {
        try runCommand("/usr/bin/env", ["python3", EvidenceBundleTests.repository + "/tools/check-bundle.py", bundle] + options)
    }

    /// One side's manifest recomputed from its files, as a forger would: the events listed with
    /// their digests, the facts the files give.
    func recomputeManifest(_ side: String) throws {
        let path = side + "/manifest.json"
        var manifest = try #require(try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).objectValue)
        let seqs = try FileManager.default.contentsOfDirectory(atPath: side + "/events").compactMap { UInt64($0.dropLast(5)) }.sorted()
        manifest["events"] = .array(
            try seqs.map { seq in
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(side)/events/\(seq).json")))
                let event = try JSONValue.parse(bytes)
                return .object([
                    "seq": .int(Int64(seq)), "type": event["type"] ?? .null, "recorded_at": event["recorded_at"] ?? .null,
                    "sha256": .string(Hex.encode(Array(SHA256.hash(data: bytes)))),
                ])
            })
        let rows = ((try? FileManager.default.contentsOfDirectory(atPath: side + "/rows")) ?? []).compactMap { UInt64($0.dropLast(5)) }
        let apply = (manifest["apply"]?.arrayValue ?? []).compactMap { $0["seq"]?.intValue.map(UInt64.init) }
        manifest["facts"] = .array(EvidenceFact.story(events: seqs, rows: rows, apply: apply).map(\.json))
        try Data(JSONValue.object(manifest).canonicalBytes + [0x0A]).write(to: URL(fileURLWithPath: path))
    }

    /// Removes event `seq` (its proof and row too) from `side`.
    func remove(_ seq: Int64, from side: String) throws {
        for file in ["events/\(seq).json", "proofs/\(seq).tlog-proof", "rows/\(seq).json"]
        where FileManager.default.fileExists(atPath: "\(side)/\(file)") {
            try FileManager.default.removeItem(atPath: "\(side)/\(file)")
        }
        try recomputeManifest(side)
    }

    /// The sequence numbers of `side`'s events of `type`.
    func events(_ type: String, in side: String) throws -> [Int64] {
        try FileManager.default.contentsOfDirectory(atPath: side + "/events").compactMap { name -> Int64? in
            let event = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: side + "/events/" + name))))
            return event["type"]?.stringValue == type ? event["seq"]?.intValue : nil
        }.sorted()
    }

    func editJSON(_ path: String, _ edit: (inout [String: JSONValue]) throws -> Void) throws {
        var object = try #require(try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).objectValue)
        try edit(&object)
        try Data(JSONValue.object(object).canonicalBytes + [0x0A]).write(to: URL(fileURLWithPath: path))
    }

    /// A copy of `bundle` changed by `change`.
    func damaged(_ bundle: String, _ name: String, _ change: (String) throws -> Void) throws -> String {
        let copy = dir.sub("damaged-" + name.replacingOccurrences(of: " ", with: "-"))
        try FileManager.default.copyItem(atPath: bundle, toPath: copy)
        try change(copy)
        return copy
    }

    @Test(
        "two-sided bundles of a scenario with notifications, sign-ins, apply and a witness: genuine ones say they are complete; each forged damage (a migration or an apply settlement left out, another person's notification let in, the subject relabelled, a forged apply statement, the receipt or the cosignatures removed with their flags) is refused by evidence verify and check-bundle.py, naming what is wrong"
    )
    func forgedDamageRefused() throws {
        let sender = try DemoLedger.copy(.sender, into: dir)
        let recipient = try DemoLedger.copy(.recipient, into: dir)
        // Team B's serve witnesses team A's log.
        let witnessKey = try handover(["witness", "key", "--ledger", recipient]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        let senderKey = try DemoLedger.copy(file: "sender.pub", into: dir)
        let server = try ServerProcess(["serve", "--ledger", recipient, "--port", "0", "--witness-log", senderKey])
        #expect(try handover(["witness", "add", server.baseURL + "/witness", "--key", witnessKey, "--ledger", sender]).status == 0)
        for ledger in [sender, recipient] { #expect(try handover(["checkpoint", "--ledger", ledger]).status == 0) }
        let round = try handover(["witness", "--ledger", sender])
        let served = server.finish()
        try #require(round.status == 0, "\(round.out)\(round.err)\n\(served.err)")

        // A person exchanged, applied and notified; another person notified.
        let state = try handover(["query", "state", "--ledger", recipient, "--format", "json"])
        let users = try #require(try JSONValue.parse(Array(state.out.utf8)).arrayValue).compactMap(\.objectValue)
        let person = try #require(
            users.first {
                $0["migrated_via"]?.stringValue == "exchange" && $0["apply_outcome"]?.stringValue == "applied"
                    && ($0["notifications"]?.intValue ?? 0) > 0 && $0["erased_at"]?.stringValue == nil
            })
        let account = try #require(person["account_id"]?.stringValue)
        let other = try #require(
            users.first {
                ($0["notifications"]?.intValue ?? 0) > 0 && $0["account_id"]?.stringValue != account && $0["erased_at"]?.stringValue == nil
            })
        let otherAccount = try #require(other["account_id"]?.stringValue ?? other["recipient_sub"]?.stringValue)
        let bundle = dir.sub("genuine")
        let written = try handover(["evidence", account, "--ledger", recipient, "--sender", sender, "--out", bundle])
        try #require(written.status == 0, "\(written.out)\(written.err)")
        let foreign = dir.sub("foreign")
        let foreignWritten = try handover(["evidence", otherAccount, "--ledger", recipient, "--out", foreign])
        try #require(foreignWritten.status == 0, "\(foreignWritten.out)\(foreignWritten.err)")

        let genuine = try handover(["evidence", "verify", bundle])
        #expect(genuine.status == 0, "\(genuine.out)\(genuine.err)")
        #expect(genuine.out.components(separatedBy: "  Complete: the events and rows shown are every event and row").count == 3, "\(genuine.out)")
        let genuinePython = try pythonCheck(bundle)
        #expect(genuinePython.status == 0 && genuinePython.out.contains("COMPLETE:"), "\(genuinePython.out)\(genuinePython.err)")

        let damages: [(name: String, blamed: String, change: (String) throws -> Void)] = [
            (
                "migration left out", "recipient/index.json",
                { copy in
                    try self.remove(try #require(try self.events("transfer-id-exchanged", in: copy + "/recipient").first), from: copy + "/recipient")
                }
            ),
            (
                "apply settlement left out", "recipient/index.json",
                { copy in try self.remove(try #require(try self.events("apply-settled", in: copy + "/recipient").first), from: copy + "/recipient") }
            ),
            (
                "another person's notification let in", "recipient/index.json",
                { copy in
                    let seq = try #require(try self.events("notification-received", in: foreign).first)
                    for file in ["events/\(seq).json", "proofs/\(seq).tlog-proof"] {
                        try FileManager.default.copyItem(atPath: "\(foreign)/\(file)", toPath: "\(copy)/recipient/\(file)")
                    }
                    // With the proofs of the names it names, taken from that person's bundle.
                    let theirs = try #require(
                        try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: foreign + "/index.json"))))["names"]?.arrayValue)
                    let event = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: "\(foreign)/events/\(seq).json"))))
                    let named = Set((event["identifiers"]?.objectValue ?? [:]).compactMap { key, value in value.stringValue.map { "\(key)=\($0)" } })
                    try self.editJSON(copy + "/recipient/index.json") { index in
                        var names = index["names"]?.arrayValue ?? []
                        names += theirs.filter { named.contains("\($0["kind"]?.stringValue ?? "")=\($0["value"]?.stringValue ?? "")") }
                        index["names"] = .array(
                            names.sorted {
                                ($0["kind"]?.stringValue ?? "", $0["value"]?.stringValue ?? "") < (
                                    $1["kind"]?.stringValue ?? "", $1["value"]?.stringValue ?? ""
                                )
                            })
                    }
                    try self.recomputeManifest(copy + "/recipient")
                }
            ),
            (
                "subject relabelled", "manifest.json",
                { copy in try self.editJSON(copy + "/manifest.json") { $0["subject"] = .string(otherAccount) } }
            ),
            (
                "forged apply statement", "recipient/manifest.json",
                { copy in
                    try self.editJSON(copy + "/recipient/manifest.json") { manifest in
                        let size = manifest["tree_size"]?.intValue ?? 0
                        manifest["apply"] = .array([
                            .object([
                                "seq": .int(size + 5), "recorded_at": .string("2026-11-30T10:00:00.000000Z"), "run": .string("forged-run"),
                                "batch": .int(0), "undo": .bool(false), "outcome": .string("applied"), "intent_seq": .int(size + 4),
                                "old_value": .null, "new_value": .string("forged"),
                            ])
                        ])
                    }
                    try self.recomputeManifest(copy + "/recipient")
                }
            ),
            (
                "receipt removed, flag false", "sender/index.json",
                { copy in
                    try self.remove(try #require(try self.events("handoff-acknowledged", in: copy + "/sender").first), from: copy + "/sender")
                    let packages = try FileManager.default.contentsOfDirectory(atPath: copy + "/handoff")
                    for package in packages { try? FileManager.default.removeItem(atPath: "\(copy)/handoff/\(package)/cosigned-checkpoint.txt") }
                    try self.editJSON(copy + "/manifest.json") { manifest in
                        manifest["packages"] = .array(
                            (manifest["packages"]?.arrayValue ?? []).map { entry in
                                var object = entry.objectValue ?? [:]
                                object["acknowledged"] = .bool(false)
                                return .object(object)
                            })
                    }
                }
            ),
        ]
        for damage in damages {
            let copy = try damaged(bundle, damage.name, damage.change)
            let ours = try handover(["evidence", "verify", copy])
            #expect(ours.status == 4 && ours.err.contains("the bundle does not hold: \(damage.blamed): "), "\(damage.name): \(ours.out)\(ours.err)")
            let theirs = try pythonCheck(copy)
            #expect(theirs.status != 0 && (theirs.out + theirs.err).contains("FAIL"), "\(damage.name): check-bundle.py: \(theirs.out)\(theirs.err)")
        }

        // The witnesses' cosignatures removed from team A's side: a reader expecting them gives
        // the policy, and the side is refused; without it, verify says plainly none are shown.
        let policy = dir.sub("policy.json")
        try FileManager.default.copyItem(atPath: bundle + "/sender/witness-policy.json", toPath: policy)
        let stripped = try damaged(bundle, "cosignatures removed") { copy in
            for file in ["cosigned-checkpoint", "witness-policy.json"] { try FileManager.default.removeItem(atPath: "\(copy)/sender/\(file)") }
        }
        let withPolicy = try handover(["evidence", "verify", stripped + "/sender", "--witness-policy", policy])
        #expect(withPolicy.status == 4 && withPolicy.err.contains("cosigned-checkpoint: missing"), "\(withPolicy.out)\(withPolicy.err)")
        let withoutPolicy = try handover(["evidence", "verify", stripped])
        #expect(
            withoutPolicy.status == 0 && withoutPolicy.out.contains("Not witnessed as far as this bundle shows"),
            "\(withoutPolicy.out)\(withoutPolicy.err)")
        let pythonWithPolicy = try pythonCheck(stripped + "/sender", ["--witness-policy", policy])
        #expect(pythonWithPolicy.status != 0, "\(pythonWithPolicy.out)\(pythonWithPolicy.err)")
    }
}
