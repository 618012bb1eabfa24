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

    init(checkpoint: Checkpoint) { self.checkpoint = checkpoint }

    func failing(_ why: String) -> CheckpointAudit {
        var copy = self
        copy.problem = why
        return copy
    }
}

extension CheckpointAudit {
    /// The finding as one JSON object (hashes in hex), with the consistency proof an auditor
    /// can check on their own (`schemas/audit-evidence.md`).
    public var json: String {
        var w = JSONWriter()
        w.beginObject()
        w.key("checkpoint"); w.string(checkpoint.text)
        w.key("consistency_proof"); w.beginArray(); for hash in consistencyProof { w.string(Hex.encode(hash)) }; w.endArray()
        w.key("current_root_hash"); w.string(Hex.encode(currentRoot))
        w.key("current_tree_size"); w.int(Int64(currentSize))
        w.key("holds"); w.bool(holds)
        w.field("problem", problem)
        w.key("signature_verified"); w.bool(signatureVerified)
        w.key("tree_size"); w.int(Int64(checkpoint.treeSize))
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
