/// CSV as every output of Handover writes it (RFC 4180): fields separated by commas, a field
/// quoted, with its quotes doubled, when it holds a comma, a quote, a carriage return or a line
/// feed.
public enum CSVField {
    /// `text` as one field. Looks at bytes, not characters: a CRLF is one `Character`, equal to
    /// neither CR nor LF.
    public static func quoted(_ text: String) -> String {
        let quote = UInt8(ascii: "\"")
        guard text.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == quote || $0 == 0x0A || $0 == 0x0D }) else { return text }
        var bytes: [UInt8] = [quote]
        bytes.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            if byte == quote { bytes.append(quote) }
            bytes.append(byte)
        }
        bytes.append(quote)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `fields` as one line, ended by `terminator` (RFC 4180's CRLF unless told otherwise).
    public static func line(_ fields: [String], terminator: String = "\r\n") -> String {
        fields.map(quoted).joined(separator: ",") + terminator
    }

    /// OWASP's CSV-injection defence for a cell of outside origin: a cell that begins with `=`,
    /// `+`, `-`, `@`, a tab or a carriage return (what a spreadsheet takes for a formula) gets a
    /// single quote in front, so the spreadsheet shows it as text instead of running it.
    public static func neutralizingFormula(_ text: String) -> String {
        guard let first = text.utf8.first, formulaStarts.contains(first) else { return text }
        return "'" + text
    }

    private static let formulaStarts: Set<UInt8> = [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D]
}
