import Basics
import Foundation

/// Body of "witness cosigned": a witness (c2sp.org/tlog-witness) cosigned one of this ledger's
/// checkpoints after checking a consistency proof from the size it last cosigned. The
/// cosignature is kept whole, so the cosigned note can be rebuilt and checked again.
public struct WitnessCosigned: Hashable, Sendable {
    /// The witness's verifier key, `name+<key ID hex>+base64(0x04 ‖ public key)`.
    public var witnessKey: String
    /// Where the checkpoint was submitted, as configured.
    public var url: String
    /// The checkpoint the witness cosigned.
    public var checkpoint: CheckpointFields
    /// The tree size the consistency proof started from (0 for the witness's first).
    public var oldSize: Int
    /// The cosignature line's base64 (key ID, timestamp, signature), as the witness sent it.
    public var cosignature: String
    /// The cosignature's timestamp: when the witness cosigned.
    public var cosignedAt: Timestamp

    public init(witnessKey: String, url: String, checkpoint: CheckpointFields, oldSize: Int, cosignature: String, cosignedAt: Timestamp) {
        self.witnessKey = witnessKey
        self.url = url
        self.checkpoint = checkpoint
        self.oldSize = oldSize
        self.cosignature = cosignature
        self.cosignedAt = cosignedAt
    }

    /// One witness's cosignature of one tree size is recorded once.
    public static func idempotencyKey(witnessKey: String, treeSize: Int) -> String { "witness-cosigned:\(witnessKey):\(treeSize)" }

    /// The witness's name: its verifier key's.
    public var witnessName: String { String(witnessKey.prefix { $0 != "+" }) }
}

extension WitnessCosigned: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            witnessKey: try c.field("witness_key", v?.witnessKey), url: try c.field("url", v?.url),
            checkpoint: try c.field("checkpoint", v?.checkpoint),
            oldSize: try c.count("old_size", v?.oldSize), cosignature: try c.field("cosignature", v?.cosignature),
            cosignedAt: try c.field("cosigned_at", v?.cosignedAt))
    }
}
