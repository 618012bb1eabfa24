import Basics
import Ledger

/// Renders an answer row by row as a table, JSON or CSV, handing the text to `output` as it
/// goes; memory stays that of one row whatever the answer's size.
///
/// JSON is an array of canonical objects keyed by column; CSV is RFC 4180 with CRLF line ends;
/// the table format needs every column's width before the first row (``ColumnWidths``).
/// Strings of outside origin stay inert in every format (``InertText``): escaped in the table,
/// escaped but for tab, CR and LF in CSV, and with JSON's `\u` escapes for the characters
/// JSON would otherwise carry raw.
public final class RowWriter<OutputError: Error>: RowSink {
    private let format: QueryTable.Format
    private let widths: [Int]?
    private let output: (String) throws(OutputError) -> Void
    private var columns: [String] = []
    private var count = 0

    /// A writer in `format`; `widths` (from ``ColumnWidths``) is required for the table format.
    public init(_ format: QueryTable.Format, widths: [Int]? = nil, output: @escaping (String) throws(OutputError) -> Void) {
        precondition(format != .table || widths != nil, "the table format needs the column widths")
        self.format = format
        self.widths = widths
        self.output = output
    }

    public func start(columns: [String]) throws(OutputError) {
        self.columns = columns
        switch format {
        case .csv: try output(CSVLine.header(columns))
        case .json: try output("[")
        case .table: break
        }
    }

    public func write(_ row: QueryTable.Row) throws(OutputError) {
        defer { count += 1 }
        switch format {
        case .csv:
            try output(CSVLine.encode(row.cells, style: .inert))
        case .json:
            try output((count == 0 ? "" : ",") + String(decoding: InertText.json(row.json.canonicalBytes), as: UTF8.self))
        case .table:
            if count == 0 {
                try output(tableLine(columns) + "\n" + tableLine(widths!.map { String(repeating: "-", count: $0) }) + "\n")
            }
            try output(tableLine(row.cells.map(\.tableText)) + "\n")
        }
    }

    public func finish() throws(OutputError) {
        switch format {
        case .csv: break
        case .json: try output("]\n")
        case .table: try output(count == 0 ? "(no rows)\n" : "(\(count) row\(count == 1 ? "" : "s"))\n")
        }
    }

    private func tableLine(_ cells: [String]) -> String {
        // Pads, never cuts: a text wider than measured widens its line instead of losing its end.
        let line = cells.enumerated().map { i, t in t + String(repeating: " ", count: max(0, widths![i] - t.count)) }.joined(separator: "  ")
        return String(line[..<(line.lastIndex { $0 != " " }.map { line.index(after: $0) } ?? line.startIndex)])
    }
}

extension QueryTable.Cell {
    /// The cell as the table format shows it: its text with control and bidi characters
    /// escaped (``InertText``), or `-` when empty.
    public var tableText: String {
        let text = self.text
        return text.isEmpty ? "-" : InertText.forScreen(text)
    }
}
