import Basics
import ExitStatuses
import Ledger
import Projections

/// The report's "both halves" section (`handover report --sender A`): the recipient's ledger
/// joined with the sender's, as `handover reconcile` does.
public struct BothHalves: Sendable {
    /// The sender ledger's origin.
    public var senderOrigin: String
    /// Checkpoints of the sender's that the recipient recorded with packages, all checked and holding.
    public var checkpointsHeld: Int
    /// Users by outcome, every outcome listed.
    public var totals: [ReconcileTotal]

    /// The section for `reconciliation`; throws ``ReconcileFailure`` when the sender's log no
    /// longer extends a checkpoint the recipient recorded.
    public static func make(_ reconciliation: Reconciliation) throws -> BothHalves {
        let findings = try reconciliation.auditCheckpoints()
        if let failure = ReconcileFailure(findings) { throw failure }
        return BothHalves(senderOrigin: try reconciliation.sender.origin(), checkpointsHeld: findings.count, totals: try reconciliation.totals())
    }

    /// The totals as a table.
    public var table: QueryTable { ReconcileTotal.answer.table(totals) }

    /// One line on the checkpoints.
    public var checkpointLine: String {
        checkpointsHeld == 0
            ? "The recipient recorded no signed package from \(senderOrigin)."
            : "\(counted(checkpointsHeld, "checkpoint")) of \(senderOrigin) recorded with its packages, each still extended by that log."
    }
}

/// The sender's log no longer holds what the recipient received: exit 4, naming each checkpoint.
public struct ReconcileFailure: Error, Sendable, CustomStringConvertible, ExitStatusDeciding {
    public let broken: [Reconciliation.CheckpointFinding]

    /// The failure among `findings`, or nil when every checkpoint holds.
    public init?(_ findings: [Reconciliation.CheckpointFinding]) {
        broken = findings.filter { $0.problem != nil }
        if broken.isEmpty { return nil }
    }

    public var description: String {
        "team A's log does not hold what team B received:\n  "
            + broken.map {
                "package \($0.package): checkpoint \($0.checkpoint.origin) at \($0.checkpoint.treeSize) events (root \($0.checkpoint.rootHash)): \($0.problem ?? "")"
            }.joined(separator: "\n  ")
    }

    public var exitStatus: ExitStatus { .integrity }
}
