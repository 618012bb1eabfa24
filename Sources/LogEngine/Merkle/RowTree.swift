import Basics

/// The Merkle tree over one batch's rows (a package's listed users, a chunk of them received,
/// an apply batch's accounts):
/// what lets one person's row be proven to the batch's signed or logged root without showing
/// anyone else's.
///
/// The hashing is the log's (RFC 9162 over SHA-256, ``MerkleHash``); only the leaf input
/// differs: the row kind's tag line, then the row's bytes. A log leaf is an event's JSON and
/// begins with `{`; a row leaf begins with `handover-`, so neither can pass for the other, and
/// the tag keeps a row of one kind from passing for a row of another. Rows carry a random salt
/// of their own (a CSV column), so the sibling hashes of a path reveal nothing that could be
/// guessed, such as an account ID.
public struct RowTree: Sendable {
    /// What a row is, named by the first line of its leaf input.
    public enum Kind: String, CaseIterable, Sendable {
        /// A line of a handoff package's `rows.csv` (team A's listing, team B's receipt).
        case handoffRow = "handover-handoff-row/v1"
        /// One account of an apply batch as planned ("apply intended").
        case applyIntendedRow = "handover-apply-intended-row/v1"
        /// One account of an apply batch as settled ("apply settled").
        case applySettledRow = "handover-apply-settled-row/v1"

        /// `0x00 ‖ tag ‖ 0x0A`: what a leaf hash takes before the row, made once per kind.
        package var leafPrefix: [UInt8] {
            switch self {
            case .handoffRow: return Self.prefixes[0]
            case .applyIntendedRow: return Self.prefixes[1]
            case .applySettledRow: return Self.prefixes[2]
            }
        }
        private static let prefixes = allCases.map { [0x00] + Array($0.rawValue.utf8) + [0x0A] }
    }

    /// Bytes of random salt in each row.
    public static let saltLength = 16

    /// A new row's salt: 16 bytes from the system's secure random source.
    public static func newSalt() -> [UInt8] {
        var random = SystemRandomNumberGenerator()
        return withUnsafeBytes(of: (random.next() as UInt64, random.next() as UInt64)) { Array($0) }
    }

    /// `count` new rows' salts, drawn from the system's secure random source at once.
    public static func newSalts(_ count: Int) -> [[UInt8]] {
        let bytes = SecureRandom.system(saltLength * count)
        return (0..<count).map { Array(bytes[$0 * saltLength..<($0 + 1) * saltLength]) }
    }

    /// The leaf hashes, in row order.
    public let leaves: [SHA256Hash]

    /// The tree over `rows`' bytes, in order.
    public init<Rows: Sequence>(kind: Kind, rows: Rows) where Rows.Element == [UInt8] {
        leaves = rows.map { Self.leafHash(kind: kind, row: $0) }
    }

    /// The tree over leaf hashes already computed.
    public init(leaves: [SHA256Hash]) { self.leaves = leaves }

    /// `SHA-256(0x00 ‖ tag ‖ 0x0A ‖ row)`: the leaf hash of one row of kind `kind`.
    public static func leafHash(kind: Kind, row: [UInt8]) -> SHA256Hash {
        row.withUnsafeBytes { leafHash(kind: kind, row: $0) }
    }

    /// The leaf hash of one row of kind `kind` whose bytes `row` lends.
    public static func leafHash(kind: Kind, row: UnsafeRawBufferPointer) -> SHA256Hash {
        kind.leafPrefix.withUnsafeBytes { SHA256Hash(hashing: $0, row) }
    }

    /// The number of rows.
    public var count: Int { leaves.count }

    /// RFC 9162's MTH over the rows; SHA-256 of no bytes for none.
    public var root: SHA256Hash { subtree(0..<leaves.count) }

    /// RFC 9162 §2.1.3.1: the audit path of row `index`, from its sibling up to the root's
    /// child. Check it with ``MerkleProof/root(leafHash:index:treeSize:path:)``.
    public func path(of index: Int) -> [SHA256Hash] {
        precondition(leaves.indices.contains(index), "row \(index) is not among \(leaves.count)")
        var path: [SHA256Hash] = []
        var range = 0..<leaves.count
        while range.count > 1 {
            let split = range.lowerBound + Int(MerkleHash.split(UInt64(range.count)))
            if index < split {
                path.append(subtree(split..<range.upperBound))
                range = range.lowerBound..<split
            } else {
                path.append(subtree(range.lowerBound..<split))
                range = split..<range.upperBound
            }
        }
        return path.reversed()
    }

    /// The root `path` leads to from `row` of kind `kind` as row `index` of `count` rows;
    /// nil when the path does not have the length such a tree gives.
    public static func root(kind: Kind, row: [UInt8], index: Int, count: Int, path: [SHA256Hash]) -> SHA256Hash? {
        root(node: leafHash(kind: kind, row: row), index: index, count: count, path: path)
    }

    /// The root `path` leads to from `node`, the root of a whole subtree (a chunk of
    /// rows, or one row's leaf hash) that is leaf `index` of a tree of `count` such nodes.
    public static func root(node: SHA256Hash, index: Int, count: Int, path: [SHA256Hash]) -> SHA256Hash? {
        guard index >= 0, count > 0 else { return nil }
        return MerkleProof.root(leafHash: node.bytes, index: UInt64(index), treeSize: UInt64(count), path: path.map(\.bytes)).flatMap {
            SHA256Hash($0)
        }
    }

    private func subtree(_ range: Range<Int>) -> SHA256Hash {
        switch range.count {
        case 0: return SHA256Hash(MerkleHash.emptyTree)!
        case 1: return leaves[range.lowerBound]
        default:
            let split = range.lowerBound + Int(MerkleHash.split(UInt64(range.count)))
            return MerkleHash.node(subtree(range.lowerBound..<split), subtree(split..<range.upperBound))
        }
    }
}
