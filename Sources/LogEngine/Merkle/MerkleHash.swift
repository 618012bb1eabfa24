import Crypto

/// RFC 9162 (Certificate Transparency 2.0) Merkle tree hashing over SHA-256.
///
/// A leaf hashes `0x00 ‖ record`, an interior node `0x01 ‖ left ‖ right`, so no leaf can
/// pass for a node. `schemas/audit-evidence.md` gives the same rules for auditors.
public enum MerkleHash {
    /// The hash of an empty tree: SHA-256 of no bytes.
    public static let emptyTree: [UInt8] = Array(SHA256.hash(data: [UInt8]()))

    /// The leaf hash of one record's bytes.
    public static func leaf(_ record: UnsafeRawBufferPointer) -> [UInt8] { leafHash(record).bytes }

    /// The leaf hash of one record's bytes, held inline.
    public static func leafHash(_ record: UnsafeRawBufferPointer) -> SHA256Hash {
        withUnsafeBytes(of: UInt8(0x00)) { SHA256Hash(hashing: $0, record) }
    }

    /// The leaf hash of a log value as stored: its event JSON, after the 32-byte chain hash.
    public static func leaf(storedRecord raw: UnsafeRawBufferPointer) -> [UInt8] {
        leaf(UnsafeRawBufferPointer(rebasing: raw[32...]))
    }

    /// The leaf hash of one record's bytes.
    public static func leaf(_ record: [UInt8]) -> [UInt8] {
        record.withUnsafeBytes { leaf($0) }
    }

    /// The leaf hash of a log value as stored, held inline.
    public static func leafHash(storedRecord raw: UnsafeRawBufferPointer) -> SHA256Hash {
        leafHash(UnsafeRawBufferPointer(rebasing: raw[32...]))
    }

    /// The hash of an interior node over its two children, held inline.
    public static func node(_ left: SHA256Hash, _ right: SHA256Hash) -> SHA256Hash {
        // 0x01 ‖ left as the prefix (33 bytes), right as the data.
        var prefix: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        return withUnsafeMutableBytes(of: &prefix) { prefix in
            prefix[0] = 0x01
            left.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: prefix[1..<33]).copyMemory(from: $0) }
            return right.withUnsafeBytes { SHA256Hash(hashing: UnsafeRawBufferPointer(rebasing: prefix[0..<33]), $0) }
        }
    }

    /// The hash of an interior node over its two children.
    public static func node(_ left: [UInt8], _ right: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: [0x01])
        hasher.update(data: left)
        hasher.update(data: right)
        return Array(hasher.finalize())
    }

    /// The largest power of two strictly below `n` (n ≥ 2): where RFC 9162 splits a tree.
    package static func split(_ n: UInt64) -> UInt64 {
        precondition(n >= 2)
        return 1 << (63 - UInt64((n - 1).leadingZeroBitCount))
    }
}
