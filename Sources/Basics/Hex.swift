/// Lower-case hexadecimal, as the ledger writes hashes, fingerprints and key IDs.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// The lower-case hex digits of `bytes`.
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { write(bytes, into: $0, at: 0) }
    }

    /// Writes the lower-case hex digits of `bytes` into `out` from `index` (which must have
    /// room for two per byte); the index after them.
    public static func write(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableBufferPointer<UInt8>, at index: Int) -> Int {
        var i = index
        for b in bytes {
            out[i] = digits[Int(b >> 4)]
            out[i + 1] = digits[Int(b & 15)]
            i += 2
        }
        return i
    }

    /// The lower-case hex digits of `bytes`.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        if let done = bytes.withContiguousStorageIfAvailable({ encode(UnsafeRawBufferPointer($0)) }) { return done }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of an even-length hex string, or nil if it is not one.
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 65...70: return c - 55
            case 97...102: return c - 87
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        for i in stride(from: 0, to: chars.count, by: 2) {
            guard let high = value(chars[i]), let low = value(chars[i + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }
}
