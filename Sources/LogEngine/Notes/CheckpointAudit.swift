import Basics

/// What `Ledger.audit(_:publicKey:)` found about an earlier checkpoint.
public struct CheckpointAudit: Sendable {
    /// The checkpoint checked.
    public var checkpoint: Checkpoint
    /// Whether its signature verified.
    public var signatureVerified = false
    /// The log's size when the consistency proof was made.
    public var currentSize: UInt64 = 0
    /// The tree head at `currentSize`.
    public var currentRoot: [UInt8] = []
    /// RFC 9162 consistency proof from the checkpoint's tree to the current one.
    public var consistencyProof: [[UInt8]] = []
    /// Why the checkpoint does not hold, or nil when it does.
    public var problem: String?

    /// Whether the log today extends the checkpointed log unchanged.
    public var holds: Bool { problem == nil }

    package init(checkpoint: Checkpoint) { self.checkpoint = checkpoint }

    package func failing(_ why: String) -> CheckpointAudit {
        var copy = self
        copy.problem = why
        return copy
    }
}

extension CheckpointAudit {
    /// The finding as one JSON object (hashes in hex), with the consistency proof an auditor
    /// can check on their own (`schemas/audit-evidence.md`); `problem` only when it does not hold.
    public var json: [String: JSONValue] {
        var object: [String: JSONValue] = [
            "checkpoint": .string(checkpoint.text),
            "consistency_proof": .array(consistencyProof.map { .string(Hex.encode($0)) }),
            "current_root_hash": .string(Hex.encode(currentRoot)),
            "current_tree_size": .int(Int64(currentSize)),
            "holds": .bool(holds),
            "signature_verified": .bool(signatureVerified),
            "tree_size": .int(Int64(checkpoint.treeSize)),
        ]
        if let problem { object["problem"] = .string(problem) }
        return object
    }
}
