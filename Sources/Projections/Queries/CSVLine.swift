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
        CSVField.line(cells.map { cell in
            switch style {
            case .exact: return cell.text
            case .inert: return InertText.forCSV(cell.text)
            case .spreadsheet:
                let text = InertText.forCSV(cell.text)
                guard case .text = cell else { return text }
                return CSVField.neutralizingFormula(text)
            }
        })
    }

    /// The header line of `columns`.
    public static func header(_ columns: [String]) -> String { CSVField.line(columns) }
}
