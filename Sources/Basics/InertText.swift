/// How a string of outside origin (a JWS header or claim, Apple's error text, a CSV cell, an
/// HTTP header) is shown, so that what a stranger sent stays data on every screen.
///
/// The ledger keeps such strings exactly as received; everything that shows them to people
/// goes through here. These characters are written as escapes, never raw: the C0 controls
/// (`\t`, `\n` and `\r` by name, the others as `\u001b` and so on), DEL, the C1 controls
/// U+0080 to U+009F, Unicode's bidirectional controls (U+061C, U+200E, U+200F, U+202A to
/// U+202E, U+2066 to U+2069) and the line and paragraph separators U+2028 and U+2029. A
/// terminal then cannot be moved, cleared or retitled by the text, and no text is shown in an
/// order other than the one it has. Everything else is kept as it is.
public enum InertText {
    /// `text` for a screen, a log line or a report.
    public static func forScreen(_ text: String) -> String {
        escaping(text, keepLineBreaks: false)
    }

    /// `text` for a CSV cell: as ``forScreen(_:)``, but tab, line feed and carriage return are
    /// kept, for the CSV writer to quote (RFC 4180 carries them inside a quoted field).
    public static func forCSV(_ text: String) -> String {
        escaping(text, keepLineBreaks: true)
    }

    /// Each line of `text` as ``forScreen(_:)`` shows it, the line feeds between them kept:
    /// for messages of several lines that quote outside text.
    public static func forScreenKeepingLines(_ text: String) -> String {
        guard needsEscape(text) else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { forScreen(String($0)) }.joined(separator: "\n")
    }

    /// JSON text (UTF-8) with DEL, the C1 controls, the bidirectional controls and the line and
    /// paragraph separators written as `\u` escapes: the same JSON value, inert on a screen.
    /// JSON already escapes the C0 controls inside strings (those outside are whitespace, left
    /// as they are), and the others are not JSON syntax, so they occur only inside strings and
    /// the replacement is exact.
    public static func json(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(where: { $0 == 0x7F || $0 == 0xC2 || $0 == 0xD8 || $0 == 0xE2 }) else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var i = 0
        while i < bytes.count {
            let length = bytes[i] < 0x20 ? 0 : escapedLength(bytes, at: i)
            if length == 0 {
                out.append(bytes[i])
                i += 1
                continue
            }
            let scalar = decode(bytes, at: i, length: length)
            appendEscape(scalar, to: &out)
            i += length
        }
        return out
    }

    /// Whether `scalar` is one that is shown escaped.
    public static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    // MARK: Implementation

    private static func escaping(_ text: String, keepLineBreaks: Bool) -> String {
        guard needsEscape(text) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            guard isEscaped(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\t", "\n", "\r":
                if keepLineBreaks { out.unicodeScalars.append(scalar) } else { out += scalar == "\t" ? "\\t" : scalar == "\n" ? "\\n" : "\\r" }
            default:
                var bytes: [UInt8] = []
                appendEscape(scalar.value, to: &bytes)
                out += String(decoding: bytes, as: UTF8.self)
            }
        }
        return out
    }

    /// Whether any byte of `text` may start an escaped character: a quick test on the UTF-8
    /// that lets almost every string through untouched.
    private static func needsEscape(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            for i in utf8.indices {
                let byte = utf8[i]
                if byte < 0x20 || byte == 0x7F { return true }
                if byte == 0xC2 || byte == 0xD8 || byte == 0xE2 {
                    if escapedLength(utf8, at: i) > 0 { return true }
                }
            }
            return false
        }
    }

    /// The length of the escaped character starting at `i`, or 0 when the character there is
    /// kept. Reads well-formed UTF-8 (a Swift string's, or canonical JSON's).
    private static func escapedLength<C: RandomAccessCollection<UInt8>>(_ bytes: C, at i: C.Index) -> Int {
        let b0 = bytes[i]
        if b0 < 0x20 || b0 == 0x7F { return 1 }
        let n = bytes.distance(from: i, to: bytes.endIndex)
        switch b0 {
        case 0xC2:
            guard n >= 2 else { return 0 }
            let b1 = bytes[bytes.index(after: i)]
            return (0x80...0x9F).contains(b1) ? 2 : 0
        case 0xD8:
            guard n >= 2 else { return 0 }
            return bytes[bytes.index(after: i)] == 0x9C ? 2 : 0
        case 0xE2:
            guard n >= 3 else { return 0 }
            let b1 = bytes[bytes.index(i, offsetBy: 1)]
            let b2 = bytes[bytes.index(i, offsetBy: 2)]
            if b1 == 0x80, b2 == 0x8E || b2 == 0x8F || (0xA8...0xAE).contains(b2) { return 3 }
            if b1 == 0x81, (0xA6...0xA9).contains(b2) { return 3 }
            return 0
        default:
            return 0
        }
    }

    private static func decode(_ bytes: [UInt8], at i: Int, length: Int) -> UInt32 {
        switch length {
        case 1: return UInt32(bytes[i])
        case 2: return UInt32(bytes[i] & 0x1F) << 6 | UInt32(bytes[i + 1] & 0x3F)
        default: return UInt32(bytes[i] & 0x0F) << 12 | UInt32(bytes[i + 1] & 0x3F) << 6 | UInt32(bytes[i + 2] & 0x3F)
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// `\u` and four lower-case hex digits.
    private static func appendEscape(_ value: UInt32, to out: inout [UInt8]) {
        out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u")])
        for shift in stride(from: 12, through: 0, by: -4) { out.append(hex[Int((value >> UInt32(shift)) & 0xF)]) }
    }
}
