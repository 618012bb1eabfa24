import LMDB

/// The right edge of the log's Merkle tree: enough to append a leaf and to compute the root.
///
/// It holds the root of each perfect subtree the leaves so far form, largest first (one per
/// set bit of `size`), and lives in `meta["merkle"]`, rewritten by every commit.
public struct MerkleFrontier: Equatable, Sendable {
    /// Interior nodes at this level (16 leaves) and above are kept in the `merkle` database;
    /// smaller subtrees are rehashed from their records when a proof needs them.
    public static let lowestStoredLevel = 4

    /// Leaves in the tree.
    public private(set) var size: UInt64
    /// Roots of the perfect subtrees, largest first.
    private var peaks: [SHA256Hash]

    /// An empty tree.
    public init() {
        size = 0
        peaks = []
        peaks.reserveCapacity(64)
    }

    /// Adds one leaf, calling `completed` for each interior node at a stored level it
    /// completes, lowest first: `(level, index within the level, hash)`.
    public mutating func append(leafHash: [UInt8], completed: (Int, UInt64, [UInt8]) throws -> Void) rethrows {
        guard let leaf = SHA256Hash(leafHash) else { preconditionFailure("a leaf hash has 32 bytes") }
        try append(leaf: leaf) { level, index, node in try completed(level, index, node.bytes) }
    }

    /// Adds one leaf, calling `completed` for each interior node at a stored level it
    /// completes, lowest first: `(level, index within the level, hash)`.
    public mutating func append(leaf: SHA256Hash, completed: (Int, UInt64, SHA256Hash) throws -> Void) rethrows {
        var node = leaf
        var level = 0
        while (size >> UInt64(level)) & 1 == 1 {
            node = MerkleHash.node(peaks.removeLast(), node)
            level += 1
            if level >= Self.lowestStoredLevel { try completed(level, size >> UInt64(level), node) }
        }
        peaks.append(node)
        size += 1
    }

    /// The tree head: RFC 9162's MTH over every leaf so far.
    public var root: [UInt8] {
        guard var hash = peaks.last else { return MerkleHash.emptyTree }
        for peak in peaks.dropLast().reversed() { hash = MerkleHash.node(peak, hash) }
        return hash.bytes
    }

    /// `size` (8 bytes, big-endian) ‖ each peak's 32 bytes.
    package var encoded: [UInt8] {
        var bytes = BigEndian.bytes(size)
        for peak in peaks { peak.withUnsafeBytes { bytes.append(contentsOf: $0) } }
        return bytes
    }

    package init?(encoded raw: UnsafeRawBufferPointer) {
        guard let size = try? BigEndian.uint64(raw, at: 0) else { return nil }
        self.size = size
        guard raw.count == 8 + 32 * size.nonzeroBitCount else { return nil }
        peaks = stride(from: 8, to: raw.count, by: 32).map { SHA256Hash(UnsafeRawBufferPointer(rebasing: raw[$0...]))! }
    }

    /// Adds the leaf of a stored log record (chain hash ‖ event JSON) and writes each node
    /// it completes at a stored level into `database`, in the caller's transaction.
    package mutating func append(storedRecord record: UnsafeRawBufferPointer, writingNodesTo database: Database, in txn: WriteTransaction) throws {
        try append(storedRecord: record) { key, node in try txn.put(database, key: key, value: node, flags: .append) }
    }

    /// Adds the leaf of a stored log record, handing `store` the key and hash of each node it
    /// completes at a stored level.
    private mutating func append(storedRecord record: UnsafeRawBufferPointer, store: (_ key: [UInt8], _ node: [UInt8]) throws -> Void) rethrows {
        try append(leaf: MerkleHash.leafHash(storedRecord: record)) { level, index, node in
            try store(LedgerSchema.merkleNodeKey(level: level, index: index), node.bytes)
        }
    }
}
