/// CSV as every output of Handover writes it (RFC 4180): fields separated by commas, a field
/// quoted, with its quotes doubled, when it holds a comma, a quote, a carriage return or a line
/// feed.
public enum CSVField {
    /// `text` as one field. Looks at bytes, not characters: a CRLF is one `Character`, equal to
    /// neither CR nor LF.
    public static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2)
        append(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `text` as one field to `out`, quoted when it must be.
    public static func append(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { append($0, to: &out) }
    }

    /// Appends the UTF-8 `bytes` as one field to `out`, quoted when they must be.
    public static func append(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        guard bytes.contains(where: { $0 == comma || $0 == quote || $0 == 0x0A || $0 == 0x0D }) else {
            out.append(contentsOf: bytes)
            return
        }
        out.append(quote)
        for byte in bytes {
            if byte == quote { out.append(quote) }
            out.append(byte)
        }
        out.append(quote)
    }

    /// `fields` as one line, ended by `terminator` (RFC 4180's CRLF unless told otherwise).
    public static func line(_ fields: [String], terminator: String = "\r\n") -> String {
        var bytes: [UInt8] = []
        for (i, field) in fields.enumerated() {
            if i > 0 { bytes.append(comma) }
            append(field, to: &bytes)
        }
        bytes.append(contentsOf: terminator.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// OWASP's CSV-injection defence for a cell of outside origin: a cell that begins with `=`,
    /// `+`, `-`, `@`, a tab or a carriage return (what a spreadsheet takes for a formula) gets a
    /// single quote in front, so the spreadsheet shows it as text instead of running it.
    public static func neutralizingFormula(_ text: String) -> String {
        startsLikeFormula(text) ? "'" + text : text
    }

    private static func startsLikeFormula(_ text: String) -> Bool {
        guard let first = text.utf8.first else { return false }
        return first == UInt8(ascii: "=") || first == UInt8(ascii: "+") || first == UInt8(ascii: "-") || first == UInt8(ascii: "@") || first == 0x09
            || first == 0x0D
    }

    private static let quote = UInt8(ascii: "\"")
    private static let comma = UInt8(ascii: ",")
}
