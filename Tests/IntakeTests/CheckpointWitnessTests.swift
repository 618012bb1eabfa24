import Foundation
import LogEngine
import Logging
import Projections
import TestSupport
import Testing
import Witnessing

@testable import Ledger

/// This ledger as a witness of another log, driven in-process: what tlog-witness promises a
/// log's readers (never two inconsistent checkpoints cosigned, never a smaller after a larger)
/// holds with two witnesses on one ledger, as two `serve` processes would be.
@Suite("serve's witness: the state per log, one transition per size")
struct CheckpointWitnessTests {
    let dir = TemporaryDirectory()
    static let origin = "example.test/witnessed-log"

    /// A log of its own: leaves, RFC 6962 roots and consistency proofs, checkpoints signed with `key`.
    struct Log {
        let key: CheckpointKey
        var leaves: [[UInt8]]

        func root(_ n: Int) -> [UInt8] { Log.root(leaves[0..<n]) }

        static func root(_ leaves: ArraySlice<[UInt8]>) -> [UInt8] {
            if leaves.isEmpty { return MerkleHash.emptyTree }
            if leaves.count == 1 { return leaves.first! }
            var k = 1
            while k * 2 < leaves.count { k *= 2 }
            return MerkleHash.node(root(leaves.prefix(k)), root(leaves.dropFirst(k)))
        }

        /// RFC 6962 section 2.1.2's SUBPROOF(m, leaves, complete).
        static func proof(_ m: Int, _ leaves: ArraySlice<[UInt8]>, complete: Bool = true) -> [[UInt8]] {
            if m == leaves.count { return complete ? [] : [root(leaves)] }
            var k = 1
            while k * 2 < leaves.count { k *= 2 }
            if m <= k { return proof(m, leaves.prefix(k), complete: complete) + [root(leaves.dropFirst(k))] }
            return proof(m - k, leaves.dropFirst(k), complete: false) + [root(leaves.prefix(k))]
        }

        /// The add-checkpoint body for the checkpoint of `size` leaves, from `old`.
        func request(from old: Int, to size: Int) throws -> [UInt8] {
            let body = "\(CheckpointWitnessTests.origin)\n\(size)\n\(Data(root(size)).base64EncodedString())\n"
            let note = try SignedNote.signing(body, name: CheckpointWitnessTests.origin, key: key)
            let proof = old == 0 ? [] : Log.proof(old, leaves[0..<size])
            return Array(CheckpointSubmission(oldSize: UInt64(old), proof: proof, checkpointText: note.serialized).text.utf8)
        }
    }

    private func witnessLedger() async throws -> (Ledger, CheckpointKey, Log) {
        let ledger = try await Ledger.create(at: dir.sub("witness"), testIdentity(), folders: [UserProjection()])
        let witnessKey = try CheckpointKey.create(in: dir.sub("witness"))
        try FileManager.default.createDirectory(atPath: dir.sub("log"), withIntermediateDirectories: true)
        let log = Log(key: try CheckpointKey.create(in: dir.sub("log")), leaves: (0..<40).map { MerkleHash.leaf(Array("entry \($0)".utf8)) })
        return (ledger, witnessKey, log)
    }

    private func witness(_ ledger: Ledger, _ key: CheckpointKey, _ log: Log) throws -> CheckpointWitness {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return try CheckpointWitness(ledger: ledger, key: key, logs: [VerifierKey(name: Self.origin, publicKey: log.key.publicKey)], logger: logger)
    }

    private func recorded(_ ledger: Ledger) throws -> [CheckpointWitnessed] {
        try ledger.read { view in
            try view.sequences(of: .checkpointWitnessed).compactMap { sequence in
                guard case .checkpointWitnessed(let body) = try view.eventAsLogged(sequence)?.body else { return nil }
                return body
            }
        }
    }

    @Test(
        "two witnesses on one ledger, each sent a different history from the same size at once: one cosigns, the other answers 409 with the size now held; one event"
    )
    func oneTransitionPerSize() async throws {
        let (ledger, key, log) = try await witnessLedger()
        defer { ledger.close() }
        var fork = log
        for i in 5..<40 { fork.leaves[i] = MerkleHash.leaf(Array("forged \(i)".utf8)) }
        let first = try witness(ledger, key, log)
        let second = try witness(ledger, key, log)
        // Both start from size 5, which both histories share.
        #expect(await first.addCheckpoint(try log.request(from: 0, to: 5)).status == 200)
        // The second has read the state too (size 5), as a second process would have.
        #expect(await second.addCheckpoint(try log.request(from: 5, to: 5)).status == 200)
        let (mine, theirs) = (try log.request(from: 5, to: 20), try fork.request(from: 5, to: 20))
        async let a = first.addCheckpoint(mine)
        async let b = second.addCheckpoint(theirs)
        let answers = [await a, await b]
        #expect(answers.map(\.status).sorted() == [200, 409], "\(answers)")
        #expect(answers.first { $0.status == 409 }?.body == "20\n", "\(answers)")
        #expect(try recorded(ledger).map(\.treeSize) == [5, 20])
        // Whichever history was cosigned at 20, the other cannot be cosigned past it.
        let winner = answers[0].status == 200 ? log : fork
        let loser = answers[0].status == 200 ? fork : log
        #expect(await second.addCheckpoint(try loser.request(from: 20, to: 30)).status == 422)
        #expect(await first.addCheckpoint(try winner.request(from: 20, to: 30)).status == 200)
        #expect(try recorded(ledger).map(\.treeSize) == [5, 20, 30])
    }

    @Test(
        "a smaller checkpoint after a larger is 409 naming the larger; the same checkpoint again is cosigned without a new event; a first checkpoint of size 0 moves nothing"
    )
    func neverBackwards() async throws {
        let (ledger, key, log) = try await witnessLedger()
        defer { ledger.close() }
        let w = try witness(ledger, key, log)
        #expect(await w.addCheckpoint(try log.request(from: 0, to: 0)).status == 200)
        #expect(try recorded(ledger).isEmpty)
        #expect(await w.addCheckpoint(try log.request(from: 0, to: 12)).status == 200)
        let smaller = await w.addCheckpoint(try log.request(from: 0, to: 8))
        #expect(smaller.status == 409 && smaller.body == "12\n" && smaller.contentType == "text/x.tlog.size")
        let again = await w.addCheckpoint(try log.request(from: 12, to: 12))
        #expect(again.status == 200 && again.body.hasPrefix("\u{2014} \(w.name) "))
        #expect(try recorded(ledger).map(\.treeSize) == [12])
        // Not the log's key: 403; not a witnessed log: 404.
        try FileManager.default.createDirectory(atPath: dir.sub("stranger"), withIntermediateDirectories: true)
        let stranger = Log(key: try CheckpointKey.create(in: dir.sub("stranger")), leaves: log.leaves)
        #expect(await w.addCheckpoint(try stranger.request(from: 12, to: 20)).status == 403)
        let otherOrigin = String(decoding: try log.request(from: 12, to: 20), as: UTF8.self).replacingOccurrences(
            of: Self.origin, with: "other.test/log")
        #expect(await w.addCheckpoint(Array(otherOrigin.utf8)).status == 404)
    }
}
