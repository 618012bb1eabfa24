import Basics
import Foundation

/// Body of "checkpoint witnessed": this ledger, as a witness (c2sp.org/tlog-witness), cosigned
/// another log's checkpoint after checking its signature with the pinned key and a consistency
/// proof from the last checkpoint of that log it cosigned. The latest of these per origin is
/// the witness's state: the next request must start from its size.
public struct CheckpointWitnessed: Hashable, Sendable {
    /// The log's origin (its checkpoint's first line).
    public var origin: String
    public var treeSize: Int
    /// The root hash, base64 as in the note.
    public var rootHash: String
    /// The size the consistency proof started from: the previous event's `tree_size` for this
    /// origin (0 for the first).
    public var oldSize: Int
    /// The checkpoint note as received, its signature lines included.
    public var checkpoint: String
    /// The cosignature line's base64 (key ID, timestamp, signature) this ledger answered with.
    public var cosignature: String
    /// The cosignature's timestamp.
    public var cosignedAt: Timestamp

    public init(origin: String, treeSize: Int, rootHash: String, oldSize: Int, checkpoint: String, cosignature: String, cosignedAt: Timestamp) {
        self.origin = origin
        self.treeSize = treeSize
        self.rootHash = rootHash
        self.oldSize = oldSize
        self.checkpoint = checkpoint
        self.cosignature = cosignature
        self.cosignedAt = cosignedAt
    }

    /// One transition of a log's state per old size: of two requests from the same size, only
    /// one is recorded (the other then finds the state moved on).
    public static func idempotencyKey(origin: String, oldSize: Int) -> String { "checkpoint-witnessed:\(origin):\(oldSize)" }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("checkpoint", checkpoint)
        w.field("cosignature", cosignature)
        w.field("cosigned_at", cosignedAt)
        w.field("old_size", oldSize)
        w.field("origin", origin)
        w.field("root_hash", rootHash)
        w.field("tree_size", treeSize)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            origin: try r.string("origin"), treeSize: try r.count("tree_size"), rootHash: try r.string("root_hash"), oldSize: try r.count("old_size"),
            checkpoint: try r.string("checkpoint"), cosignature: try r.string("cosignature"), cosignedAt: try r.timestamp("cosigned_at"))
    }
}

/// Body of "witness request refused": a log-signed add-checkpoint request this ledger, as a
/// witness, refused because it does not extend what it cosigned before (422), or names the
/// size it cosigned with another root: evidence that the log showed two histories.
public struct WitnessRequestRefused: Hashable, Sendable {
    public var origin: String
    /// The HTTP status answered (422, or 409 for another root at the cosigned size).
    public var status: Int
    public var reason: String
    /// The request body as received: the old size, the proof and the log-signed checkpoint.
    public var request: String
    /// The size and root this ledger had cosigned for the origin when it refused.
    public var cosignedSize: Int
    public var cosignedRoot: String

    public init(origin: String, status: Int, reason: String, request: String, cosignedSize: Int, cosignedRoot: String) {
        self.origin = origin
        self.status = status
        self.reason = reason
        self.request = request
        self.cosignedSize = cosignedSize
        self.cosignedRoot = cosignedRoot
    }

    /// A request sent again is kept once.
    public static func idempotencyKey(requestSHA256: String) -> String { "witness-request-refused:\(requestSHA256)" }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("cosigned_root", cosignedRoot)
        w.field("cosigned_size", cosignedSize)
        w.field("origin", origin)
        w.field("reason", reason)
        w.field("request", request)
        w.field("status", status)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            origin: try r.string("origin"), status: try r.int("status", in: 400...499), reason: try r.string("reason"),
            request: try r.string("request"), cosignedSize: try r.count("cosigned_size"), cosignedRoot: try r.string("cosigned_root"))
    }
}
