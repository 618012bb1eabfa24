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
