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
}

extension CheckpointWitnessed: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            origin: try c.field("origin", v?.origin), treeSize: try c.count("tree_size", v?.treeSize),
            rootHash: try c.field("root_hash", v?.rootHash),
            oldSize: try c.count("old_size", v?.oldSize), checkpoint: try c.field("checkpoint", v?.checkpoint),
            cosignature: try c.field("cosignature", v?.cosignature), cosignedAt: try c.field("cosigned_at", v?.cosignedAt))
    }
}

extension WitnessRequestRefused: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            origin: try c.field("origin", v?.origin), status: try c.field("status", v?.status, in: 400...499),
            reason: try c.field("reason", v?.reason),
            request: try c.field("request", v?.request), cosignedSize: try c.count("cosigned_size", v?.cosignedSize),
            cosignedRoot: try c.field("cosigned_root", v?.cosignedRoot))
    }
}
