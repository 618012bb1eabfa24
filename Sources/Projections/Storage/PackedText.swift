import Basics
import Ledger
import LogEngine

/// How user record version 2 stores a string: as received, in fewer bytes when it holds
/// lower-case hex or canonical base64, the forms Apple's `sub`s, transfer IDs, key IDs and
/// sealed emails take. Every form decodes to exactly the string encoded: a form is chosen only
/// after checking that it gives the string back.
///
/// One form byte, then:
/// - 0: nothing (no string);
/// - 1: varint length ‖ UTF-8;
/// - 2: varint length ‖ prefix UTF-8 ‖ varint n ‖ n bytes, written as 2n lower-case hex digits
///   ‖ varint length ‖ suffix UTF-8: the string's longest run of lower-case hex digits (at
///   least ``PackedText/shortestHexRun``, an even count) kept as bytes;
/// - 3: varint n ‖ n bytes, written as standard base64 with padding.
enum PackedText {
    static let absent: UInt8 = 0, plain: UInt8 = 1, hexRun: UInt8 = 2, base64: UInt8 = 3
    /// Shorter runs save too little to be worth a form.
    static let shortestHexRun = 16

    static func write(_ optional: String?, to w: inout BinaryWriter) {
        guard var text = optional else {
            w.bytes.append(absent)
            return
        }
        text.withUTF8 { utf8 in
            if let run = longestHexRun(utf8) {
                w.bytes.append(hexRun)
                w.counted(utf8[..<run.lowerBound])
                w.varint(UInt64(run.count / 2))
                hexValues.withUnsafeBufferPointer { hex in
                    for i in stride(from: run.lowerBound, to: run.upperBound, by: 2) {
                        w.bytes.append(hex[Int(utf8[i])] << 4 | hex[Int(utf8[i + 1])])
                    }
                }
                w.counted(utf8[run.upperBound...])
            } else if utf8.count >= shortestHexRun, let padding = canonicalBase64Padding(utf8) {
                w.bytes.append(base64)
                w.varint(UInt64(utf8.count / 4 * 3 - padding))
                writeBase64Decoded(utf8, padding: padding, to: &w)
            } else {
                w.bytes.append(plain)
                w.counted(utf8)
            }
        }
    }

    static func read(from r: inout BinaryReader) throws -> String? {
        switch try r.u8() {
        case absent:
            return nil
        case plain:
            return String(decoding: try r.counted(), as: UTF8.self)
        case hexRun:
            let prefix = try r.counted()
            let run = try r.counted()
            let suffix = try r.counted()
            return String(unsafeUninitializedCapacity: prefix.count + run.count * 2 + suffix.count) { out in
                var i = out.initialize(fromContentsOf: prefix)
                i = Hex.write(run, into: out, at: i)
                return out[i...].initialize(fromContentsOf: suffix)
            }
        case base64:
            return base64Text(try r.counted())
        case let form:
            throw LedgerError(.malformedRecord, "users: unknown text form \(form)")
        }
    }

    private static let base64Digits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `bytes` in standard base64 with padding, written straight into the string (a listing
    /// decodes a sealed email per user).
    private static func base64Text(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: (bytes.count + 2) / 3 * 4) { out in
            var i = 0
            var o = 0
            while i < bytes.count {
                let left = bytes.count - i
                let b0 = UInt32(bytes[i])
                let b1 = left > 1 ? UInt32(bytes[i + 1]) : 0
                let b2 = left > 2 ? UInt32(bytes[i + 2]) : 0
                let group = b0 << 16 | b1 << 8 | b2
                out[o] = base64Digits[Int(group >> 18)]
                out[o + 1] = base64Digits[Int(group >> 12 & 63)]
                out[o + 2] = left > 1 ? base64Digits[Int(group >> 6 & 63)] : UInt8(ascii: "=")
                out[o + 3] = left > 2 ? base64Digits[Int(group & 63)] : UInt8(ascii: "=")
                i += 3
                o += 4
            }
            return o
        }
    }

    /// Each byte's value as a base64 digit; 255 for a byte that is not one.
    private static let base64Values: [UInt8] = {
        var values = [UInt8](repeating: 255, count: 256)
        for (value, digit) in base64Digits.enumerated() { values[Int(digit)] = UInt8(value) }
        return values
    }()

    /// The count of `=` ending `utf8` when it is canonical standard base64 with padding, the
    /// one text ``base64Text(_:)`` gives back for its bytes: whole groups of four, digits of
    /// the standard alphabet, at most two `=` at the end, and zero bits below the last digit.
    private static func canonicalBase64Padding(_ utf8: UnsafeBufferPointer<UInt8>) -> Int? {
        let n = utf8.count
        guard n > 0, n % 4 == 0 else { return nil }
        let padding = utf8[n - 1] != UInt8(ascii: "=") ? 0 : utf8[n - 2] != UInt8(ascii: "=") ? 1 : 2
        for i in 0..<(n - padding) where base64Values[Int(utf8[i])] == 255 { return nil }
        switch padding {
        case 1: return base64Values[Int(utf8[n - 2])] & 0b11 == 0 ? 1 : nil
        case 2: return base64Values[Int(utf8[n - 3])] & 0b1111 == 0 ? 2 : nil
        default: return 0
        }
    }

    /// Appends the bytes canonical base64 `utf8` (ending in `padding` `=`) stands for.
    private static func writeBase64Decoded(_ utf8: UnsafeBufferPointer<UInt8>, padding: Int, to w: inout BinaryWriter) {
        var i = 0
        while i < utf8.count {
            let group = (0..<4).reduce(UInt32(0)) { group, k in group << 6 | UInt32(base64Values[Int(utf8[i + k])] & 63) }
            let bytes = i + 4 < utf8.count ? 3 : 3 - padding
            for k in 0..<bytes { w.bytes.append(UInt8(truncatingIfNeeded: group >> (16 - 8 * k))) }
            i += 4
        }
    }

    /// Each byte's value as a lower-case hex digit; 255 for a byte that is not one.
    private static let hexValues: [UInt8] = {
        var values = [UInt8](repeating: 255, count: 256)
        for (value, digit) in "0123456789abcdef".utf8.enumerated() { values[Int(digit)] = UInt8(value) }
        return values
    }()

    /// The longest run of lower-case hex digits in `utf8`, cut to an even count (the first
    /// longest, if several); nil when shorter than ``shortestHexRun``.
    private static func longestHexRun(_ utf8: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        guard utf8.count >= shortestHexRun else { return nil }
        return hexValues.withUnsafeBufferPointer { hex in
            var best = 0..<0
            var start = 0
            for i in 0...utf8.count where i == utf8.count || hex[Int(utf8[i])] == 255 {
                let even = (i - start) & ~1
                if even > best.count { best = start..<(start + even) }
                start = i + 1
            }
            return best.count >= shortestHexRun ? best : nil
        }
    }
}
