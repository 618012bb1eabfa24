import Basics
import Crypto
import Foundation
import Ledger
import LogEngine
import Logging

/// This ledger as a witness of other logs (c2sp.org/tlog-witness): an add-checkpoint request
/// is checked in the order the spec gives, and a checkpoint is cosigned only when it extends
/// the last one of its log this ledger cosigned. That state is the ledger's own "checkpoint
/// witnessed" events: each is recorded under the key of the size it moved from, so of two
/// requests from one size only one can be recorded, here or in another process.
///
/// A log-signed request that does not extend the cosigned checkpoint is recorded as "witness
/// request refused": the evidence of a log that showed two histories.
public actor CheckpointWitness {
    let ledger: Ledger
    let key: CheckpointKey
    /// This witness's name in its cosignatures: the ledger's origin.
    public nonisolated let name: String
    /// The logs witnessed: origin → the pinned verifier key.
    let logs: [String: VerifierKey]
    let logger: Logger
    let clock: @Sendable () -> UInt64
    /// The latest cosigned checkpoint per origin, read from the log at the first request.
    private var states: [String: CheckpointWitnessed]?

    /// The largest request body read: the old size, up to 63 proof hashes and a checkpoint.
    public static let maximumRequestBytes = 16 * 1024

    public init(
        ledger: Ledger, key: CheckpointKey, logs: [VerifierKey], logger: Logger,
        clock: @escaping @Sendable () -> UInt64 = { UInt64(max(0, Date().timeIntervalSince1970)) }
    ) throws {
        self.ledger = ledger
        self.key = key
        self.name = try ledger.origin()
        self.logs = Dictionary(logs.map { ($0.name, $0) }) { first, _ in first }
        self.logger = logger
        self.clock = clock
    }

    /// The origins of the logs witnessed, sorted.
    public nonisolated var logNames: [String] { logs.keys.sorted() }

    /// This witness's cosigner verifier key, for the logs' operators.
    public nonisolated var verifierKey: String { Cosignature.verifierKey(name: name, publicKey: key.publicKey) }

    /// What a request is answered: its status, body and content type.
    public struct Answer: Equatable, Sendable {
        public var status: Int
        public var body: String
        public var contentType: String

        static func text(_ status: Int, _ message: String) -> Answer {
            Answer(status: status, body: message + "\n", contentType: "text/plain; charset=utf-8")
        }
    }

    /// Answers one add-checkpoint request body.
    public func addCheckpoint(_ body: [UInt8]) async -> Answer {
        guard let text = String(validating: body, as: UTF8.self), let request = try? CheckpointSubmission(parsing: text) else {
            return .text(400, "bad request: not an add-checkpoint body (old N, proof lines, an empty line, a checkpoint)")
        }
        guard let note = try? SignedNote(parsing: Array(request.checkpointText.utf8)), let head = CheckpointHead(note.text) else {
            return .text(400, "bad request: the checkpoint is not a signed note of origin, size and root hash")
        }
        guard let log = logs[head.origin] else { return .text(404, "unknown log origin") }
        guard note.verify(name: log.name, publicKey: log.publicKey) == .verified else {
            return .text(403, "no verifying signature from the log's key")
        }
        guard request.oldSize <= head.size else { return .text(400, "bad request: old size is larger than the checkpoint size") }
        do {
            return try await decide(request, note: note, head: head, body: text)
        } catch {
            logger.error("witness: the ledger cannot be read or written", metadata: ["error": "\(error)"])
            return .text(503, "the witness cannot reach its ledger now")
        }
    }

    /// The checks against the state, the cosignature and its record, in one step of the actor.
    private func decide(_ request: CheckpointSubmission, note: SignedNote, head: CheckpointHead, body: String) async throws -> Answer {
        let state = try currentStates()[head.origin]
        let size = UInt64(state?.treeSize ?? 0)
        let root = state.flatMap { Data(base64Encoded: $0.rootHash) }.map(Array.init) ?? MerkleHash.emptyTree
        guard request.oldSize == size else {
            if head.size == size, head.root != root {
                try await keep(body, of: head.origin, status: 409, reason: "another root for the size cosigned", state: state)
            }
            return Answer(status: 409, body: "\(size)\n", contentType: "text/x.tlog.size")
        }
        let consistent =
            size == 0
            ? (head.size > 0 || head.root == MerkleHash.emptyTree)
            : MerkleProof.verifyConsistency(oldSize: size, oldRoot: root, newSize: head.size, newRoot: head.root, proof: request.proof)
        guard consistent else {
            let reason = "the consistency proof from \(size) to \(head.size) events does not verify against the checkpoint cosigned before"
            try await keep(body, of: head.origin, status: 422, reason: reason, state: state)
            return .text(422, reason)
        }
        let now = clock()
        let line = try Cosignature.sign(body: note.text, name: name, key: key, timestamp: now)
        // A checkpoint of the size cosigned before is cosigned again and changes nothing.
        if head.size > size {
            let witnessed = CheckpointWitnessed(
                origin: head.origin, treeSize: Int(head.size), rootHash: Data(head.root).base64EncodedString(), oldSize: Int(size),
                checkpoint: request.checkpointText, cosignature: Data(line.keyID + line.bytes).base64EncodedString(),
                cosignedAt: Timestamp(seconds: Int64(now)))
            let outcome = try await ledger.append(
                EventDraft(
                    .checkpointWitnessed(witnessed), idempotencyKey: CheckpointWitnessed.idempotencyKey(origin: head.origin, oldSize: Int(size))))
            guard outcome.isRecorded else {
                // Another process moved this log on from the same size: read where it is now.
                states = try ledger.read { try $0.witnessedLogs() }
                return Answer(status: 409, body: "\(states?[head.origin]?.treeSize ?? 0)\n", contentType: "text/x.tlog.size")
            }
            states?[head.origin] = witnessed
        }
        return Answer(status: 200, body: line.line, contentType: "text/plain; charset=utf-8")
    }

    private func currentStates() throws -> [String: CheckpointWitnessed] {
        if let states { return states }
        let read = try ledger.read { try $0.witnessedLogs() }
        states = read
        return read
    }

    /// Records a log-signed request that does not extend the cosigned checkpoint.
    private func keep(_ body: String, of origin: String, status: Int, reason: String, state: CheckpointWitnessed?) async throws {
        let refused = WitnessRequestRefused(
            origin: origin, status: status, reason: reason, request: body, cosignedSize: state?.treeSize ?? 0,
            cosignedRoot: state?.rootHash ?? Data(MerkleHash.emptyTree).base64EncodedString())
        let digest = Hex.encode(Array(SHA256.hash(data: Array(body.utf8))))
        _ = try await ledger.append(
            EventDraft(.witnessRequestRefused(refused), idempotencyKey: WitnessRequestRefused.idempotencyKey(requestSHA256: digest)))
        logger.warning("witness: refused a log-signed checkpoint", metadata: ["origin": "\(origin)", "status": "\(status)", "reason": "\(reason)"])
    }
}

/// The three lines a checkpoint's note text begins with (c2sp.org/tlog-checkpoint): origin,
/// decimal size, base64 root hash. A Handover checkpoint signed before 0.5.0 has a fourth,
/// its `time` line; other extension lines are refused.
struct CheckpointHead: Equatable, Sendable {
    let origin: String
    let size: UInt64
    let root: [UInt8]

    init?(_ text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        guard lines.count == 3 || (lines.count == 4 && lines[3].hasPrefix("time ")), !lines[0].isEmpty,
            let size = UInt64(lines[1]), String(size) == lines[1], size < 1 << 63,
            let root = Data(base64Encoded: lines[2]), root.count == 32, root.base64EncodedString() == lines[2]
        else { return nil }
        origin = lines[0]
        self.size = size
        self.root = Array(root)
    }
}
