/// Receives an answer's rows as they are produced, so an answer of any size is written as it
/// is read instead of being held in memory.
public protocol RowSink: AnyObject {
    /// Called once, before any row, with the answer's columns.
    func start(columns: [String]) throws
    /// One row, its cells in column order.
    func write(_ row: QueryTable.Row) throws
    /// Called once, after the last row.
    func finish() throws
}

/// Writes the rows of one answer into a sink under fixed columns: what the queries use to
/// name each cell where it is made.
struct RowStream {
    let columns: [String]
    let sink: any RowSink

    /// Starts the answer in `sink`.
    init(_ columns: [String], into sink: any RowSink) throws {
        self.columns = columns
        self.sink = sink
        try sink.start(columns: columns)
    }

    /// Writes a row given as column → cell, in the order of the columns.
    func append(_ cells: KeyValuePairs<String, QueryTable.Cell>) throws {
        try sink.write(QueryTable.Row(columns: columns, named: cells))
    }

    func finish() throws { try sink.finish() }
}
