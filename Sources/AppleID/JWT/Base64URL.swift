import Foundation

/// Base64url without padding (RFC 7515 §2), as JWTs use it, coded byte by byte: every
/// notification and sign-in report decodes three parts of a token.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// Each byte's 6-bit value, 0xFF for a byte outside the alphabet.
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { values[Int(byte)] = UInt8(value) }
        return values
    }()

    /// Encodes `bytes` as unpadded base64url.
    public static func encode<Bytes: DataProtocol>(_ bytes: Bytes) -> String {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var i = 0
        while i < input.count {
            let left = min(3, input.count - i)
            var group = UInt32(input[i]) << 16
            if left > 1 { group |= UInt32(input[i + 1]) << 8 }
            if left > 2 { group |= UInt32(input[i + 2]) }
            // Three bytes make four characters; one makes two, two make three.
            for k in 0...left { out.append(alphabet[Int(group >> UInt32(18 - 6 * k) & 63)]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64url, unpadded or padded to a multiple of four; nil when `text` is not the
    /// encoding of its bytes: a byte outside the alphabet, padding that does not complete the
    /// last group, a length no encoding has, or bits left over that an encoder writes as zero.
    /// Only one text decodes to given bytes, so a token cannot be spelled two ways.
    public static func decode(_ text: Substring) -> Data? {
        var utf8 = Array(text.utf8)
        if utf8.last == UInt8(ascii: "=") {
            guard utf8.count % 4 == 0 else { return nil }
            utf8.removeLast()
            if utf8.last == UInt8(ascii: "=") { utf8.removeLast() }
            guard utf8.count % 4 >= 2 else { return nil }
        }
        guard utf8.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in utf8 {
            let value = values[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard accumulator == 0 else { return nil }
        return Data(out)
    }
}
