import CSHA256
import Crypto

/// A SHA-256 hash held inline, 32 bytes in four words: what the Merkle tree passes around by
/// the million, where an array per hash would cost an allocation each.
public struct SHA256Hash: Equatable, Hashable, Sendable {
    /// The 32 bytes. Usable from inlinable code: the hash is compared and lent by the million in
    /// other modules (the person index's prefix tree), where a call per comparison would show.
    @usableFromInline var words: (UInt64, UInt64, UInt64, UInt64)

    /// The hash `digest` holds.
    public init(_ digest: SHA256Digest) {
        words = (0, 0, 0, 0)
        digest.withUnsafeBytes { source in withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: source) } }
    }

    /// The SHA-256 of `prefix ‖ data`: the chain, leaf and node hashes the ledger computes by
    /// the million. On a CPU with the x86 SHA extensions it is computed on the stack
    /// (`CSHA256`), where swift-crypto's hasher allocates a context for each; elsewhere by
    /// swift-crypto, whose assembly is faster than portable C. `prefix` is at most 64 bytes.
    public init(hashing prefix: UnsafeRawBufferPointer, _ data: UnsafeRawBufferPointer) {
        precondition(prefix.count <= 64, "a SHA256Hash prefix is at most 64 bytes")
        guard Self.onExtensions else {
            var hasher = SHA256()
            hasher.update(bufferPointer: prefix)
            hasher.update(bufferPointer: data)
            self = SHA256Hash(hasher.finalize())
            return
        }
        words = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { out in
            handover_sha256(prefix.baseAddress, prefix.count, data.baseAddress, data.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Whether this CPU has the x86 SHA extensions `CSHA256` uses.
    package static let onExtensions = handover_sha256_uses_extensions() != 0

    /// The hash in the first 32 bytes of `bytes`, nil when there are fewer.
    @inlinable
    public init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 32 else { return nil }
        words = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<32])) }
    }

    /// The hash in `bytes`, nil unless it has 32.
    @inlinable
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 32, let hash = bytes.withUnsafeBytes({ SHA256Hash($0) }) else { return nil }
        self = hash
    }

    /// The 32 bytes.
    @inlinable
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Lends the 32 bytes to `body`.
    @inlinable
    public func withUnsafeBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try Swift.withUnsafeBytes(of: words, body)
    }

    @inlinable
    public static func == (a: SHA256Hash, b: SHA256Hash) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2 && a.words.3 == b.words.3
    }

    @inlinable
    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
