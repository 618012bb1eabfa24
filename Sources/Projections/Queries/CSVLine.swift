import Basics
import Ledger

/// The one CSV encoder of answers, exports and output files: RFC 4180 fields (``CSVField``),
/// CRLF line ends, null as an empty field.
public enum CSVLine {
    /// How a line treats text.
    public enum Style: Sendable {
        /// Every value exactly as it is: files programs read back (a run's output CSV).
        case exact
        /// Control and bidi characters other than tab, CR and LF written as `\u` escapes
        /// (``InertText/forCSV(_:)``): answers, and exports read by programs.
        case inert
        /// ``inert``, and a text that begins like a spreadsheet formula gets a `'` in front
        /// (``CSVField/neutralizingFormula(_:)``; numbers and Booleans never do).
        case spreadsheet
    }

    /// One line of `cells`.
    public static func encode(_ cells: [QueryTable.Cell], style: Style) -> String {
        var bytes: [UInt8] = []
        append(cells, style: style, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends one line of `cells` to `out`: what writers of many lines call, with no string
    /// made per cell or per line.
    public static func append(_ cells: [QueryTable.Cell], style: Style, to out: inout [UInt8]) {
        for (i, cell) in cells.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            switch cell {
            case .null: break
            case .bool(let value): out.append(contentsOf: value ? "true".utf8 : "false".utf8)
            // Digits, a sign and RFC 3339 never need quoting, escaping or neutralising.
            case .int(let value): out.append(contentsOf: String(value).utf8)
            case .time(let value): value.appendRFC3339(to: &out)
            case .text(let text): appendText(text, style: style, to: &out)
            // A list of another answer's values is not outside text a spreadsheet would run.
            case .events: appendText(cell.text, style: style == .exact ? .exact : .inert, to: &out)
            }
        }
        out.append(contentsOf: [0x0D, 0x0A])
    }

    /// The header line of `columns`.
    public static func header(_ columns: [String]) -> String { CSVField.line(columns) }

    private static func appendText(_ text: String, style: Style, to out: inout [UInt8]) {
        switch style {
        case .exact: CSVField.append(text, to: &out)
        case .inert: CSVField.append(InertText.forCSV(text), to: &out)
        case .spreadsheet: CSVField.append(CSVField.neutralizingFormula(InertText.forCSV(text)), to: &out)
        }
    }
}
