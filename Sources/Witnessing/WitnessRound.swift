import Basics
import Foundation
import Ledger
import LogEngine
import Logging

/// One round of witnessing: the ledger's latest checkpoint goes to every witness with a
/// consistency proof from the size that witness last cosigned (c2sp.org/tlog-witness), the
/// witnesses asked at once. Each new cosignature is recorded as a "witness cosigned" event,
/// and the largest cosigned checkpoint is written beside the ledger (`cosigned-checkpoint`).
///
/// Nothing is recorded for a witness that refuses or does not answer: the round says so, and
/// the next round starts again from what the log holds.
public struct WitnessRound: Sendable {
    public let ledger: Ledger
    public let client: WitnessClient
    public let logger: Logger

    public init(ledger: Ledger, client: WitnessClient, logger: Logger) {
        self.ledger = ledger
        self.client = client
        self.logger = logger
    }

    /// The cosigned checkpoint's file name in the ledger directory.
    public static let cosignedFileName = "cosigned-checkpoint"
    /// How many times a 409 may name another size before the witness counts as garbled.
    static let conflictsAllowed = 3

    /// The checkpoint submitted and each witness's outcome, in the order given.
    public struct Report: Sendable {
        public var checkpoint: Checkpoint
        public var outcomes: [(witness: Witness, outcome: WitnessOutcome)]
    }

    /// Submits `checkpoint` (the ledger's latest) to `witnesses` and records what they cosigned.
    public func run(_ checkpoint: Checkpoint, to witnesses: [Witness]) async throws -> Report {
        let recorded = try ledger.read { try $0.latestCosignatures() }
        let outcomes = await withTaskGroup(of: (Int, WitnessOutcome, WitnessCosigned?).self) { group in
            for (index, witness) in witnesses.enumerated() {
                group.addTask {
                    let (outcome, event) = await self.submit(checkpoint, to: witness, last: recorded[witness.key.line])
                    return (index, outcome, event)
                }
            }
            var results: [(Int, WitnessOutcome, WitnessCosigned?)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }
        }
        let events = outcomes.compactMap(\.2).map { body in
            EventDraft(
                .witnessCosigned(body),
                idempotencyKey: WitnessCosigned.idempotencyKey(witnessKey: body.witnessKey, treeSize: body.checkpoint.treeSize))
        }
        if !events.isEmpty {
            _ = try await ledger.append(contentsOf: events)
            if let note = try ledger.read({ try $0.cosignedCheckpoint()?.note }) {
                try AtomicFile.write(
                    Array(note.serialized.utf8), to: (ledger.directory as NSString).appendingPathComponent(WitnessRound.cosignedFileName), mode: 0o644
                )
            }
        }
        for (index, outcome, _) in outcomes {
            logger.info("witness round", metadata: ["witness": "\(witnesses[index].key.name)", "outcome": "\(outcome.summary)"])
        }
        return Report(checkpoint: checkpoint, outcomes: outcomes.map { (witnesses[$0.0], $0.1) })
    }

    /// One witness: the submission from the size it last cosigned, and again from the size a
    /// 409 names.
    private func submit(_ checkpoint: Checkpoint, to witness: Witness, last: WitnessCosigned?) async -> (WitnessOutcome, WitnessCosigned?) {
        let size = checkpoint.treeSize
        var old = UInt64(last?.checkpoint.treeSize ?? 0)
        if let last, old == size, last.checkpoint.rootHash == Data(checkpoint.rootHash).base64EncodedString() {
            return (.alreadyCosigned(timestamp: UInt64(max(0, last.cosignedAt.seconds))), nil)
        }
        if old > size { return (.ahead(size: old), nil) }
        for _ in 0...WitnessRound.conflictsAllowed {
            let proof: [[UInt8]]
            do {
                proof = old == 0 ? [] : try ledger.read { [old] in try $0.consistencyProof(from: old, to: size) }
            } catch {
                return (.garbled(status: 0, "no consistency proof from \(old) to \(size) events: \(error)"), nil)
            }
            let submission = CheckpointSubmission(oldSize: old, proof: proof, checkpointText: checkpoint.text)
            switch await client.submit(submission, of: checkpoint, to: witness) {
            case .cosigned(let line, let timestamp):
                let body = WitnessCosigned(
                    witnessKey: witness.key.line, url: witness.url, checkpoint: CheckpointFields(checkpoint), oldSize: Int(old),
                    cosignature: Data(line.keyID + line.bytes).base64EncodedString(),
                    cosignedAt: Timestamp(seconds: Int64(timestamp)))
                return (.cosigned(oldSize: old, timestamp: timestamp), body)
            case .conflict(let named) where named > size:
                return (.ahead(size: named), nil)
            case .conflict(let named) where named == old:
                return (.garbled(status: 409, "the witness names the size that was sent (\(old)) as the one it holds"), nil)
            case .conflict(let named):
                old = named
            case .inconsistent(let why): return (.inconsistent(why), nil)
            case .refused(let status, let why): return (.refused(status: status, why), nil)
            case .unavailable(let status, let why): return (.unavailable(status: status, why), nil)
            case .garbled(let status, let why): return (.garbled(status: status, why), nil)
            }
        }
        return (.garbled(status: 409, "the witness named another size \(WitnessRound.conflictsAllowed + 1) times"), nil)
    }
}
