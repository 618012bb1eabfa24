import Basics
import Foundation
import Ledger

/// An answer's rows as the renderers lay them out: named columns and rows of cells read by
/// column name, rendered as a table, JSON or CSV. The rows come from an ``Answer``'s typed
/// values through its declared columns.
public struct QueryTable: Sendable, Equatable {
    /// One typed value.
    public enum Cell: Sendable, Equatable {
        case text(String)
        case int(Int)
        case bool(Bool)
        case time(Timestamp)
        /// Rows of another answer (a user's history), listed inside this one.
        case events(QueryTable)
        case null

        /// The cell as text (times in RFC 3339 UTC, null as empty, rows of another answer as
        /// their first column's values separated by spaces).
        public var text: String {
            switch self {
            case .text(let s): return s
            case .int(let i): return String(i)
            case .bool(let b): return b ? "true" : "false"
            case .time(let t): return t.rfc3339
            case .events(let table): return table.rows.map { $0.cells.first?.text ?? "" }.joined(separator: " ")
            case .null: return ""
            }
        }
    }

    /// Output formats.
    public enum Format: String, Sendable, CaseIterable {
        case table, json, csv
    }

    /// One row of an answer: its cells, read by column name.
    public struct Row: Sendable, Equatable {
        /// The table's columns, in order.
        public let columns: [String]
        /// The cells in column order, for code that lays out every column (the renderers).
        public let cells: [Cell]

        /// The cell in `column`. Traps when the table has no such column: a column name is
        /// part of the program, like a key path, and a misspelt one must not read as empty.
        public subscript(_ column: String) -> Cell {
            guard let index = columns.firstIndex(of: column) else {
                preconditionFailure("no column \"\(column)\" in \(columns.joined(separator: ", "))")
            }
            return cells[index]
        }
    }

    public let columns: [String]
    public private(set) var rows: [Row] = []

    /// Appends a row under the same columns.
    public mutating func append(_ row: Row) {
        precondition(row.columns == columns, "row columns \(row.columns) differ from the table's \(columns)")
        rows.append(row)
    }

    /// The answer `produce` writes into a sink, collected in memory: for answers known to be
    /// small (one user, counts by class, a report's tables) and for tests.
    public static func collect(_ produce: (any RowSink) throws -> Void) throws -> QueryTable {
        let collector = Collector()
        try produce(collector)
        return collector.table ?? QueryTable(columns: [])
    }

    private final class Collector: RowSink {
        var table: QueryTable?
        func start(columns: [String]) { table = QueryTable(columns: columns) }
        func write(_ row: Row) { table?.rows.append(row) }
        func finish() {}
    }

    /// The first `count` rows, under the same columns.
    public func prefix(_ count: Int) -> QueryTable {
        var table = QueryTable(columns: columns)
        table.rows = Array(rows.prefix(count))
        return table
    }

    /// The same rows without the columns that are null in every row, to fit a screen or a
    /// printed page.
    public func withoutEmptyColumns() -> QueryTable {
        let kept = columns.filter { column in rows.contains { $0[column] != .null } }
        var table = QueryTable(columns: kept)
        table.rows = rows.map { row in Row(columns: kept, cells: kept.map { row[$0] }) }
        return table
    }

    /// Renders the answer in `format`, as ``RowWriter`` writes it row by row.
    public func render(_ format: Format) -> String {
        var text = ""
        let writer = RowWriter<Never>(format, widths: format == .table ? ColumnWidths.of(self) : nil) { text += $0 }
        writer.start(columns: columns)
        for row in rows { writer.write(row) }
        writer.finish()
        return text
    }

    /// The rows as a JSON array of objects keyed by column (times in RFC 3339 UTC).
    public var json: JSONValue { .array(rows.map(\.json)) }
}

extension QueryTable.Row {
    /// The row as a JSON object keyed by column (times in RFC 3339 UTC).
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        for (column, cell) in zip(columns, cells) {
            switch cell {
            case .text(let s): object[column] = .string(s)
            case .int(let i): object[column] = .int(Int64(i))
            case .bool(let b): object[column] = .bool(b)
            case .time(let t): object[column] = .string(t.rfc3339)
            case .events(let table): object[column] = table.json
            case .null: object[column] = .null
            }
        }
        return .object(object)
    }
}
