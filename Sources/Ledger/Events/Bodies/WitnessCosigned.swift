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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("checkpoint", checkpoint)
        w.field("cosignature", cosignature)
        w.field("cosigned_at", cosignedAt)
        w.field("old_size", oldSize)
        w.field("url", url)
        w.field("witness_key", witnessKey)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            witnessKey: try r.string("witness_key"), url: try r.string("url"), checkpoint: try CheckpointFields(reading: r.object("checkpoint")),
            oldSize: try r.count("old_size"), cosignature: try r.string("cosignature"), cosignedAt: try r.timestamp("cosigned_at"))
    }
}
