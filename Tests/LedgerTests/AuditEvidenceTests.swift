import Basics
import Crypto
import Foundation
import LMDB
import LogEngine
import TestSupport
import Testing

@testable import Ledger

/// RFC 9162's MTH written out directly from leaf hashes, with none of the ledger's shortcuts
/// (no stored nodes, no frontier): the reference the tree is checked against.
private func referenceRoot(_ leaves: ArraySlice<[UInt8]>) -> [UInt8] {
    if leaves.isEmpty { return Array(SHA256.hash(data: [UInt8]())) }
    if leaves.count == 1 { return leaves.first! }
    var k = 1
    while k * 2 < leaves.count { k *= 2 }
    let split = leaves.startIndex + k
    return Array(SHA256.hash(data: [0x01] + referenceRoot(leaves[..<split]) + referenceRoot(leaves[split...])))
}

@Suite("Audit evidence: Merkle tree, checkpoints, proofs")
struct AuditEvidenceTests {
    private func failure(_ i: Int) -> EventDraft {
        EventDraft(
            .transferIDExchangeFailed(TransferIDExchangeFailed(failure: CallFailure(kind: .serverError, httpStatus: 503, message: "HTTP 503 #\(i)"))),
            identifiers: Identifiers(accountID: "acct-\(i)", transferSub: "t-\(i)"))
    }

    /// A ledger of `count` events appended in uneven batches, and every event's leaf hash
    /// computed from its stored JSON as SHA-256(0x00 ‖ json).
    private func ledger(events count: Int, in dir: TemporaryDirectory) async throws -> (Ledger, [[UInt8]]) {
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        var i = 0
        while i < count - 1 {
            let batch = min(1 + i % 37, count - 1 - i)
            _ = try await ledger.append(contentsOf: (i..<(i + batch)).map(failure))
            i += batch
        }
        let leaves = try ledger.read { view in
            try (1...UInt64(count)).map { seq in Array(SHA256.hash(data: [0x00] + Array(try view.record(seq)![32...]))) }
        }
        return (ledger, leaves)
    }

    @Test("the root kept on append equals RFC 9162's MTH at every size, and so does every subtree read from stored nodes")
    func rootsMatchTheReference() async throws {
        let dir = TemporaryDirectory()
        let (ledger, leaves) = try await ledger(events: 300, in: dir)
        defer { ledger.close() }
        try ledger.read { (view: LogView) throws in
            #expect(try view.merkleFrontier().size == 300)
            #expect(try view.merkleFrontier().root == referenceRoot(leaves[...]))
            for size in 1...300 {
                #expect(try view.subtreeHash(0..<UInt64(size)) == referenceRoot(leaves[0..<size]), "size \(size)")
            }
        }
        // The frontier kept across commits equals one rebuilt leaf by leaf.
        var rebuilt = MerkleFrontier()
        for leaf in leaves { rebuilt.append(leafHash: leaf) { _, _, _ in } }
        #expect(try ledger.read { try $0.merkleFrontier() } == rebuilt)
    }

    @Test("every inclusion and consistency proof verifies, and none survives a changed hash, index or size")
    func proofsVerify() async throws {
        let dir = TemporaryDirectory()
        let (ledger, leaves) = try await ledger(events: 140, in: dir)
        defer { ledger.close() }
        try ledger.read { (view: LogView) throws in
            for size in [1, 2, 3, 16, 17, 31, 32, 33, 64, 100, 128, 129, 140] {
                let root = referenceRoot(leaves[0..<size])
                for index in 0..<size {
                    let path = try view.inclusionPath(leaf: UInt64(index), treeSize: UInt64(size))
                    #expect(
                        MerkleProof.verifyInclusion(leafHash: leaves[index], index: UInt64(index), treeSize: UInt64(size), path: path, root: root))
                    #expect(
                        !MerkleProof.verifyInclusion(
                            leafHash: leaves[(index + 1) % 140], index: UInt64(index), treeSize: UInt64(size), path: path, root: root))
                    if size > 1 {
                        #expect(
                            !MerkleProof.verifyInclusion(
                                leafHash: leaves[index], index: UInt64((index + 1) % size), treeSize: UInt64(size), path: path, root: root))
                    }
                }
            }
            for old in 1...140 {
                for new in stride(from: old, through: 140, by: 7) {
                    let proof = try view.consistencyProof(from: UInt64(old), to: UInt64(new))
                    let oldRoot = referenceRoot(leaves[0..<old])
                    let newRoot = referenceRoot(leaves[0..<new])
                    #expect(
                        MerkleProof.verifyConsistency(oldSize: UInt64(old), oldRoot: oldRoot, newSize: UInt64(new), newRoot: newRoot, proof: proof),
                        "\(old) → \(new)")
                    if old < new {
                        #expect(
                            !MerkleProof.verifyConsistency(
                                oldSize: UInt64(old), oldRoot: newRoot, newSize: UInt64(new), newRoot: newRoot, proof: proof))
                        #expect(
                            !MerkleProof.verifyConsistency(
                                oldSize: UInt64(old), oldRoot: oldRoot, newSize: UInt64(new), newRoot: oldRoot, proof: proof))
                    }
                }
            }
        }
    }

    @Test("a checkpoint signs origin, size and root, with no extension line; an edited or foreign one is refused")
    func checkpointSignatures() async throws {
        let dir = TemporaryDirectory()
        let (ledger, leaves) = try await ledger(events: 50, in: dir)
        defer { ledger.close() }
        let key = try CheckpointKey.load(from: ledger.directory)
        let checkpoint = try ledger.signCheckpoint(with: key)
        #expect(checkpoint.body == "\(checkpoint.origin)\n50\n\(Data(checkpoint.rootHash).base64EncodedString())\n")
        #expect(checkpoint.time == nil)
        #expect(checkpoint.treeSize == 50)
        #expect(checkpoint.rootHash == referenceRoot(leaves[...]))
        #expect(checkpoint.origin == "handover/BBBB222222/\(try ledger.identity().ledgerID)")
        #expect(try ledger.latestCheckpoint() == checkpoint)

        let parsed = try Checkpoint(parsing: checkpoint.text)
        #expect(parsed == checkpoint)
        #expect(parsed.isSigned(by: key.publicKey))
        let verifierKey = Checkpoint.verifierKey(name: checkpoint.origin, publicKey: key.publicKey)
        #expect(Checkpoint.publicKey(fromVerifierKey: verifierKey)?.key == key.publicKey)

        let edited = try Checkpoint(parsing: checkpoint.text.replacingOccurrences(of: "\n50\n", with: "\n49\n"))
        #expect(!edited.isSigned(by: key.publicKey))
        let stranger = try CheckpointKey.create(in: dir.path)
        #expect(!checkpoint.isSigned(by: stranger.publicKey))
        #expect(throws: LedgerError.self) { try Checkpoint(parsing: "handover/x\n1\nnot base64\n\n— handover/x AAAA\n") }

        // The log extends it: an audit after more events holds, with a proof of the new size.
        _ = try await ledger.append(contentsOf: (50..<80).map(failure))
        let audit = try ledger.audit(checkpoint, publicKey: key.publicKey)
        #expect(audit.holds, "\(audit.problem ?? "")")
        #expect(audit.currentSize == 80 && !audit.consistencyProof.isEmpty)
        #expect(try !ledger.audit(checkpoint, publicKey: stranger.publicKey).holds)
        #expect(try !ledger.audit(edited, publicKey: key.publicKey).holds)

        let proof = try ledger.prove(17, against: checkpoint)
        #expect(proof.isValid)
        #expect(throws: LedgerError.self) { try ledger.prove(51, against: checkpoint) }
    }

    @Test("a checkpoint signed before 0.5.0, with its time line, is read, verified and audited as it was signed; no other extension line is")
    func checkpointWithTimeLine() async throws {
        let dir = TemporaryDirectory()
        let (ledger, _) = try await ledger(events: 20, in: dir)
        defer { ledger.close() }
        let key = try CheckpointKey.load(from: ledger.directory)
        let current = try ledger.signCheckpoint(with: key)
        let time = try #require(Timestamp(rfc3339: "2026-11-22T10:00:00.123456Z"))
        let older = try Checkpoint(origin: current.origin, treeSize: 20, rootHash: current.rootHash, time: time, key: key)
        #expect(older.body == current.body + "time 2026-11-22T10:00:00.123456Z\n")
        let parsed = try Checkpoint(parsing: older.text)
        #expect(parsed == older && parsed.time == time && parsed.isSigned(by: key.publicKey))
        #expect(try ledger.audit(parsed, publicKey: key.publicKey).holds)
        // The same tree head signed without the line is another note, and each signature covers only its own.
        #expect(
            try !Checkpoint(parsing: current.text.replacingOccurrences(of: "\n\n", with: "\ntime 2026-11-22T10:00:00.123456Z\n\n")).isSigned(
                by: key.publicKey))
        // An extension line other than that time line, or a second one, is not a Handover checkpoint.
        let signature = current.text.components(separatedBy: "\n\n")[1]
        for extra in ["extension line", "time 2026-11-22T10:00:00.123456Z\ntime 2026-11-22T10:00:00.123456Z", "time yesterday"] {
            #expect(throws: LedgerError.self) { try Checkpoint(parsing: current.body + extra + "\n\n" + signature) }
        }
    }

    @Test("verify rebuilds the tree: a tampered stored node or edge is found")
    func tamperedNodesAreFound() async throws {
        let dir = TemporaryDirectory()
        let (ledger, _) = try await ledger(events: 64, in: dir)
        defer { ledger.close() }
        #expect(try ledger.verify().isIntact)
        let nodeKey = LedgerSchema.merkleNodeKey(level: 4, index: 2)
        _ = try ledger.environment.write { txn in
            try txn.put(ledger.schema.merkle, key: nodeKey, value: [UInt8](repeating: 7, count: 32))
        }
        let report = try ledger.verify()
        #expect(!report.isIntact)
        #expect(report.problem?.contains("Merkle node at level 4, index 2") == true, "\(report.problem ?? "")")
    }
}

@Suite("Audit evidence: ledgers written before the Merkle tree")
struct MerkleUpgradeTests {
    @Test("opening a ledger without the tree builds it from the log, and appends continue it")
    func upgradeBuildsTheTree() async throws {
        let dir = TemporaryDirectory()
        var ledger: Ledger? = try await Ledger.create(at: dir.sub("l"), testIdentity())
        for i in 0..<40 {
            _ = try await ledger!.append(
                EventDraft(
                    .transferIDExchangeFailed(TransferIDExchangeFailed(failure: CallFailure(kind: .timeout, message: "timeout \(i)"))),
                    identifiers: Identifiers(accountID: "acct-\(i)")))
        }
        let rootBefore = try ledger!.read { try $0.merkleFrontier().root }
        // Make it look like a ledger from before: no tree databases, no edge in meta.
        _ = try ledger!.environment.write { txn in
            try txn.drop(ledger!.schema.merkle)
            try txn.drop(ledger!.schema.checkpoints)
            return try txn.delete(ledger!.schema.meta, key: LedgerSchema.merkleKey)
        }
        ledger!.close()
        ledger = nil

        let reopened = try Ledger.open(at: dir.sub("l"))
        defer { reopened.close() }
        #expect(try reopened.read { try $0.merkleFrontier().root } == rootBefore)
        _ = try await reopened.append(
            EventDraft(
                .transferIDExchangeFailed(TransferIDExchangeFailed(failure: CallFailure(kind: .timeout, message: "later"))),
                identifiers: Identifiers(accountID: "acct-late")))
        let report = try reopened.verify()
        #expect(report.isIntact, "\(report.problem ?? "")")
        #expect(report.eventCount == 42)
        let key = try CheckpointKey.load(from: dir.sub("l"))
        let checkpoint = try reopened.signCheckpoint(with: key)
        #expect(try reopened.prove(20, against: checkpoint).isValid)
    }
}
