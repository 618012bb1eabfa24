/// Big-endian fixed-width integers as bytes, so LMDB's byte order is numeric order.
public enum BigEndian {
    /// The eight big-endian bytes of `value`.
    @inline(__always)
    public static func bytes(_ value: UInt64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// Appends the eight big-endian bytes of `value`.
    @inline(__always)
    public static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Reads a big-endian UInt64 at `offset` of `bytes`.
    @inline(__always)
    public static func uint64(_ bytes: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt64 {
        var value: UInt64 = 0
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 8)])) }
        return UInt64(bigEndian: value)
    }

    /// Reads a big-endian UInt64 at `offset` of `bytes`.
    public static func uint64(_ bytes: [UInt8], at offset: Int = 0) -> UInt64 {
        bytes.withUnsafeBytes { uint64($0, at: offset) }
    }
}
