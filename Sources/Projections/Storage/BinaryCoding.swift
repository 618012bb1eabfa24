import Basics
import Ledger
import LogEngine

/// Appends fields to a byte buffer: big-endian integers, LEB128 varints and packed text.
struct BinaryWriter {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(192) }

    mutating func u64(_ v: UInt64) { BigEndian.append(v, to: &bytes) }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }

    /// Unsigned LEB128: seven bits per byte, low bits first, the high bit set on every byte
    /// but the last.
    mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// A varint length, then the bytes.
    mutating func counted<Bytes: Collection>(_ b: Bytes) where Bytes.Element == UInt8 {
        varint(UInt64(b.count))
        bytes.append(contentsOf: b)
    }
}

/// Reads what ``BinaryWriter`` wrote, failing on truncation.
struct BinaryReader {
    let raw: UnsafeRawBufferPointer
    var offset = 0

    init(_ raw: UnsafeRawBufferPointer) { self.raw = raw }

    var isAtEnd: Bool { offset == raw.count }

    mutating func take(_ n: Int) throws -> UnsafeRawBufferPointer {
        guard n >= 0, n <= raw.count - offset else { throw LedgerError(.malformedRecord, "projection record is truncated") }
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + n)])
    }

    mutating func u8() throws -> UInt8 { try take(1)[0] }
    mutating func u64() throws -> UInt64 { try BigEndian.uint64(try take(8)) }
    mutating func u32() throws -> UInt32 {
        let b = try take(4)
        return UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
    }

    /// A time written as ``BinaryWriter/u64(_:)`` of its microseconds; `record` names the record
    /// in the error when the value is no time RFC 3339 can write (years 0000 to 9999).
    mutating func time(_ record: String) throws -> Timestamp {
        try BinaryReader.checked(Int64(bitPattern: try u64()), record)
    }

    /// `microseconds` as a time, or the error naming `record` that it is none.
    static func checked(_ microseconds: Int64, _ record: String) throws -> Timestamp {
        guard let time = Timestamp(checkedMicroseconds: microseconds) else {
            throw LedgerError(.malformedRecord, "\(record): a time of \(microseconds) µs from 1970, outside years 0000 to 9999")
        }
        return time
    }

    /// An unsigned LEB128 of at most ten bytes that fits 64 bits.
    mutating func varint() throws -> UInt64 {
        var v: UInt64 = 0
        for shift in stride(from: UInt64(0), through: 63, by: 7) {
            let byte = try u8()
            guard shift < 63 || byte <= 1 else { break }
            v |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return v }
        }
        throw LedgerError(.malformedRecord, "projection record has a varint beyond 64 bits")
    }

    /// A varint length, then that many bytes.
    mutating func counted() throws -> UnsafeRawBufferPointer { try take(Int(clamping: try varint())) }
}
