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
        w.key("audit_path")
        w.beginArray()
        for hash in path { w.string(Hex.encode(hash)) }
        w.endArray()
        w.key("checkpoint")
        w.string(checkpoint.text)
        w.key("leaf_hash")
        w.string(Hex.encode(leafHash))
        w.key("leaf_index")
        w.int(Int64(sequence - 1))
        w.key("public_key")
        w.string(Checkpoint.verifierKey(name: checkpoint.origin, publicKey: publicKey))
        w.key("record_base64")
        w.string(Data(record).base64EncodedString())
        w.key("root_hash")
        w.string(Hex.encode(checkpoint.rootHash))
        w.key("sequence")
        w.int(Int64(sequence))
        w.key("tree_size")
        w.int(Int64(checkpoint.treeSize))
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
