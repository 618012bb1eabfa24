import Basics
import Foundation

/// Evidence that one event is in the log a checkpoint signed: its record, the RFC 9162
/// audit path and the checkpoint.
public struct InclusionProof: Sendable {
    /// The event's sequence number; its leaf index is `sequence - 1`.
    public var sequence: UInt64
    /// The event's JSON bytes exactly as stored (the leaf's input).
    public var record: [UInt8]
    /// Sibling hashes from the leaf up to the root.
    public var path: [[UInt8]]
    /// The checkpoint the path leads to.
    public var checkpoint: Checkpoint

    /// The proof that `record`, event `sequence`, is under `checkpoint` by `path`.
    public init(sequence: UInt64, record: [UInt8], path: [[UInt8]], checkpoint: Checkpoint) {
        self.sequence = sequence
        self.record = record
        self.path = path
        self.checkpoint = checkpoint
    }

    /// SHA-256(0x00 ‖ record).
    public var leafHash: [UInt8] { MerkleHash.leaf(record) }

    /// Whether the path leads from the record to the checkpoint's root hash.
    public var isValid: Bool {
        MerkleProof.verifyInclusion(leafHash: leafHash, index: sequence - 1, treeSize: checkpoint.treeSize, path: path, root: checkpoint.rootHash)
    }

    /// The proof as one JSON object (hashes in hex, the record in base64); the format
    /// `schemas/audit-evidence.md` documents.
    public func json(publicKey: [UInt8]) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("audit_path", strings: path.lazy.map { Hex.encode($0) })
        w.field("checkpoint", checkpoint.text)
        w.field("leaf_hash", Hex.encode(leafHash))
        w.field("leaf_index", Int64(sequence - 1))
        w.field("public_key", Checkpoint.verifierKey(name: checkpoint.origin, publicKey: publicKey))
        w.field("record_base64", Data(record).base64EncodedString())
        w.field("root_hash", Hex.encode(checkpoint.rootHash))
        w.field("sequence", Int64(sequence))
        w.field("tree_size", Int64(checkpoint.treeSize))
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
