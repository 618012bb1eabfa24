/// Measures the width of each column of an answer as the table format prints it: the first
/// of two passes over an answer too large to hold, the second being the ``RowWriter``.
public final class ColumnWidths: RowSink {
    /// The widest text of each column, header included; empty before ``start(columns:)``.
    public private(set) var widths: [Int] = []

    public init() {}

    public func start(columns: [String]) { widths = columns.map(\.count) }

    public func write(_ row: QueryTable.Row) {
        for (i, cell) in row.cells.enumerated() { widths[i] = max(widths[i], cell.tableText.count) }
    }

    public func finish() {}

    /// The widths of a table in memory.
    static func of(_ table: QueryTable) -> [Int] {
        let measure = ColumnWidths()
        measure.start(columns: table.columns)
        for row in table.rows { measure.write(row) }
        return measure.widths
    }
}
