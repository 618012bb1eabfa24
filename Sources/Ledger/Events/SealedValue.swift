#if canImport(Glibc)
import Basics
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Personal data encrypted with one user's data key (AES-256-GCM); the key lives in the
/// key store, never in the log, so destroying it erases the data and keeps the chain intact.
public struct SealedValue: Hashable, Sendable {
    /// The algorithm name written to the ledger.
    public static let algorithm = "AES-256-GCM"

    /// The data key's ID (32 hex digits) in the key store.
    public var keyID: String
    /// Base64 of nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes).
    public var combined: String

    public init(keyID: String, combined: String) {
        self.keyID = keyID
        self.combined = combined
    }
}

extension SealedValue {
    /// The canonical JSON `bytes` with every sealed value (`{"alg":"AES-256-GCM","ct":…,"kid":…}`)
    /// replaced by the JSON `replacement` gives for it, in one pass over the bytes.
    ///
    /// In canonical JSON a quote inside a string is always escaped, so the opening bytes of a
    /// sealed value cannot occur inside a string; the result is canonical whenever each
    /// replacement is. Returns nil when a sealed value's `ct` or `kid` holds an escape, which
    /// the ledger never writes; the caller then takes the general path.
    public static func replacingSealedValues(in bytes: UnsafeRawBufferPointer, with replacement: (SealedValue) throws -> [UInt8]) rethrows -> [UInt8]?
    {
        let opening = Array(#"{"alg":"AES-256-GCM","ct":""#.utf8)
        let middle = Array(#"","kid":""#.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var copied = 0
        var i = 0
        while let start = firstIndex(of: opening, in: bytes, from: i) {
            let ctStart = start + opening.count
            guard let ctEnd = firstIndex(of: [UInt8(ascii: "\"")], in: bytes, from: ctStart),
                bytes.count >= ctEnd + middle.count, bytes[ctEnd..<(ctEnd + middle.count)].elementsEqual(middle)
            else {
                i = ctStart
                continue
            }
            let kidStart = ctEnd + middle.count
            guard let kidEnd = firstIndex(of: [UInt8(ascii: "\"")], in: bytes, from: kidStart),
                kidEnd + 1 < bytes.count, bytes[kidEnd + 1] == UInt8(ascii: "}")
            else {
                i = ctStart
                continue
            }
            let ct = UnsafeRawBufferPointer(rebasing: bytes[ctStart..<ctEnd])
            let kid = UnsafeRawBufferPointer(rebasing: bytes[kidStart..<kidEnd])
            if ct.contains(UInt8(ascii: "\\")) || kid.contains(UInt8(ascii: "\\")) { return nil }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[copied..<start]))
            out.append(
                contentsOf: try replacement(SealedValue(keyID: String(decoding: kid, as: UTF8.self), combined: String(decoding: ct, as: UTF8.self))))
            copied = kidEnd + 2
            i = copied
        }
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[copied...]))
        return out
    }

    private static func firstIndex(of pattern: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = bytes.baseAddress, !pattern.isEmpty else { return nil }
        var i = start
        while bytes.count - i >= pattern.count {
            guard let hit = memchr(base + i, Int32(pattern[0]), bytes.count - i) else { return nil }
            let at = base.distance(to: UnsafeRawPointer(hit))
            guard bytes.count - at >= pattern.count else { return nil }
            if pattern.withUnsafeBytes({ memcmp(base + at, $0.baseAddress!, pattern.count) == 0 }) { return at }
            i = at + 1
        }
        return nil
    }
}

extension SealedValue: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        try c.constant("alg", algorithm)
        return Self(keyID: try c.field("kid", v?.keyID), combined: try c.field("ct", v?.combined))
    }
}
