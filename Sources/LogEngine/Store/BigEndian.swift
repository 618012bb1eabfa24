/// Big-endian fixed-width integers as bytes, so LMDB's byte order is numeric order.
public enum BigEndian {
    /// The eight big-endian bytes of `value`.
    @inlinable @inline(__always)
    public static func bytes(_ value: UInt64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// Appends the eight big-endian bytes of `value`.
    @inlinable @inline(__always)
    public static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Reads a big-endian UInt64 at `offset` of `bytes`; a ``LedgerError`` (malformed record)
    /// when `bytes` end before the eight bytes do, as a stored key or value altered in a copy can.
    @inlinable @inline(__always)
    public static func uint64(_ bytes: UnsafeRawBufferPointer, at offset: Int = 0) throws -> UInt64 {
        guard offset >= 0, offset <= bytes.count - 8 else { throw truncated(bytes.count, offset) }
        var value: UInt64 = 0
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 8)])) }
        return UInt64(bigEndian: value)
    }

    /// Reads a big-endian UInt64 at `offset` of `bytes`, as the other ``uint64(_:at:)-(UnsafeRawBufferPointer,_)`` does.
    @inlinable
    public static func uint64(_ bytes: [UInt8], at offset: Int = 0) throws -> UInt64 {
        try bytes.withUnsafeBytes { try uint64($0, at: offset) }
    }

    @usableFromInline
    static func truncated(_ count: Int, _ offset: Int) -> LedgerError {
        LedgerError(.malformedRecord, "a stored entry of \(count) bytes is too short for the number its layout puts at byte \(offset)")
    }
}
