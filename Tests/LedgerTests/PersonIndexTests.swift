import Basics
import Crypto
import Foundation
import LMDB
import LogEngine
import TestSupport
import Testing

@testable import Ledger

/// The prefix tree's root written out from its definition (schemas/audit-evidence.md, "Person
/// index") over every label and leaf hash at once, with none of the index's stored nodes.
private func referenceRoot(_ leaves: [(label: [UInt8], leaf: [UInt8])], from depth: Int = 0) -> [UInt8] {
    if leaves.isEmpty { return [UInt8](repeating: 0, count: 32) }
    if leaves.count == 1 { return leaves[0].leaf }
    func bit(_ label: [UInt8], _ i: Int) -> Bool { (label[i >> 3] >> (7 - UInt8(i & 7))) & 1 == 1 }
    var d = depth
    while Set(leaves.map { bit($0.label, d) }).count == 1 { d += 1 }
    let left = leaves.filter { !bit($0.label, d) }
    let right = leaves.filter { bit($0.label, d) }
    return Array(SHA256.hash(data: [0x01, UInt8(d)] + referenceRoot(left, from: d + 1) + referenceRoot(right, from: d + 1)))
}

@Suite("Person index: one history per name, committed and proven")
struct PersonIndexTests {
    /// Event `i`: a failed exchange naming account `acct-(i % 23)` and transfer_sub `t-(i % 41)`,
    /// so that names recur across events.
    private func draft(_ i: Int) -> EventDraft {
        EventDraft(
            .transferIDExchangeFailed(TransferIDExchangeFailed(failure: CallFailure(kind: .serverError, httpStatus: 503, message: "HTTP 503 #\(i)"))),
            identifiers: Identifiers(accountID: "acct-\(i % 23)", transferSub: "t-\(i % 41)"))
    }

    /// Every name's history and leaf computed from the stored events directly.
    private func expected(_ ledger: Ledger) throws -> [PersonName: (history: PersonHistory, leaf: [UInt8])] {
        try ledger.read { view in
            var histories: [PersonName: PersonHistory] = [:]
            for seq in 1...(try view.head().sequence) {
                let raw = try view.record(seq)!
                let leaf = Array(SHA256.hash(data: [0x00] + Array(raw[32...])))
                let event = try LogView.decode(raw, sequence: seq)
                if case .personIndexCommitted = event.body { continue }
                for identifier in event.identifiers.all where identifier.kind != .jti {
                    histories[PersonName(identifier), default: .empty].append(sequence: seq, leaf: SHA256Hash(leaf)!)
                }
            }
            // The label and leaf as the document defines them, not through the index's own code.
            return histories.reduce(into: [:]) { result, pair in
                let label = Array(SHA256.hash(data: Array("handover-person-label/v1\n\(pair.key.kind)\n\(pair.key.value)".utf8)))
                #expect(label == pair.key.label.bytes)
                let leaf = Array(SHA256.hash(data: [UInt8(0)] + label + BigEndian.bytes(pair.value.count) + pair.value.chain.bytes))
                result[pair.key] = (pair.value, leaf)
            }
        }
    }

    @Test("the stored index, built in steps, has the root of its definition; every name's proof leads to it and nothing else does")
    func storedIndexMatchesTheDefinition() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        for step in 0..<4 {
            _ = try await ledger.append(contentsOf: (step * 50..<(step * 50 + 50)).map(draft))
            let committed = try #require(try await ledger.commitPersonIndex())
            let names = try expected(ledger)
            let reference = referenceRoot(
                names.map { (Array(SHA256.hash(data: Array("handover-person-label/v1\n\($0.key.kind)\n\($0.key.value)".utf8))), $0.value.leaf) })
            #expect(committed.root == Hex.encode(reference), "step \(step)")
            #expect(committed.names == names.count)
            try ledger.read { view in
                for (name, want) in names {
                    let proof = try #require(try view.personIndexProof(of: name))
                    #expect(proof.history == want.history)
                    #expect(proof.root?.bytes == reference)
                    // A sibling or depth changed leads elsewhere.
                    if var forged = Optional(proof), !forged.steps.isEmpty {
                        forged.steps[0].depth &+= 1
                        #expect(forged.root?.bytes != reference)
                    }
                }
                #expect(try view.personIndexProof(of: PersonName(kind: "account_id", value: "acct-99")) == nil)
            }
        }
        // Nothing new: no second commit of the same root.
        #expect(try await ledger.commitPersonIndex() == nil)
    }

    @Test("the index recomputed in memory from the events equals the stored one at each commit")
    func recomputationAgrees() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        _ = try await ledger.append(contentsOf: (0..<120).map(draft))
        try await ledger.commitPersonIndex()
        _ = try await ledger.append(contentsOf: (120..<130).map(draft))
        try await ledger.commitPersonIndex()
        try ledger.read { view in
            let recomputed = PersonIndexRecomputation()
            for seq in 1...(try view.head().sequence) {
                let raw = try view.record(seq)!
                let event = try view.withStoredRows(LogView.decode(raw, sequence: seq))
                if case .personIndexCommitted(let body) = event.body {
                    #expect(body.indexedSize == Int(recomputed.size))
                    #expect(body.root == Hex.encode(try recomputed.root().bytes))
                }
                try recomputed.add(event, leaf: MerkleHash.leafHash(storedRecord: raw))
            }
        }
    }

    @Test(
        "thousands of names added in batches of every size, in memory and in a ledger's records: each root is the definition's, each proof leads to it, and a name's history keeps its log order"
    )
    func manyNamesInBatches() throws {
        var generator = SystemRandomNumberGenerator()
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.sub("tree"), withIntermediateDirectories: true)
        let environment = try Environment(path: dir.sub("tree"))
        var records: [PrefixTreeRecord.Key: PrefixTreeRecord] = [:]
        let inMemory = PrefixTree(load: { records[$0] }, save: { records[$0] = $1 })
        var histories: [SHA256Hash: PersonHistory] = [:]
        var sequence: UInt64 = 0
        // Labels sharing long prefixes as well as random ones: records a level or more deep.
        var labels = (0..<3000).map { _ in SHA256Hash((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })! }
        labels += (0..<200).map { i in SHA256Hash(labels[i].bytes.prefix(8 + i % 20) + (0..<(24 - i % 20)).map { _ in UInt8.random(in: 0...255) })! }
        for batch in [1, 1, 2, 7, 60, 500, 4000, 1500] {
            var additions: [PrefixTree.Addition] = []
            for _ in 0..<batch {
                sequence += 1
                let label = labels.randomElement(using: &generator)!
                let leaf = SHA256Hash(
                    hashing: UnsafeRawBufferPointer(start: nil, count: 0), [UInt8](BigEndian.bytes(sequence)).withUnsafeBytes { $0 })
                additions.append(PrefixTree.Addition(label: label, sequence: sequence, leaf: leaf))
                histories[label, default: .empty].append(sequence: sequence, leaf: leaf)
            }
            let newNames = try inMemory.add(additions)
            let stored = try environment.write { txn in
                let database = try txn.openDatabase("person_index", create: true)
                let tree = PrefixTree(
                    load: { key in try txn.get(database, key: key.stored).flatMap { raw in raw.withUnsafeBytes { PrefixTreeRecord(encoded: $0) } } },
                    save: { key, record in _ = try txn.put(database, key: key.stored, value: record.encoded) })
                _ = try tree.add(additions)
                return try tree.rootHash()
            }
            let reference = referenceRoot(histories.map { ($0.key.bytes, $0.value.leafHash(label: $0.key).bytes) })
            #expect(try inMemory.rootHash().bytes == reference && stored.bytes == reference, "after a batch of \(batch)")
            #expect(newNames <= batch)
            for label in histories.keys.shuffled().prefix(300) {
                let (history, steps) = try #require(try inMemory.proof(of: label))
                #expect(history == histories[label])
                #expect(PrefixTree.root(label: label, leaf: history.leafHash(label: label), steps: steps)?.bytes == reference)
            }
        }
        #expect(records.count > 1)
        #expect(try inMemory.proof(of: SHA256Hash([UInt8](repeating: 7, count: 32))!) == nil)
    }
}
