import Ledger
import Relays

/// One answer's declaration: its name, what it lists, and its columns, each declared once.
/// Every output of the answer (table, JSON, CSV, an export, the report) is written from these
/// columns, so a column added here appears in all of them, and nowhere else.
public struct Answer<Row>: Sendable {
    /// The answer's name in the column reference (`migrated`, `export users`, …).
    public let name: String
    /// Where a user meets it (`handover query migrated`).
    public let source: String
    /// What one row is, in one line.
    public let meaning: String
    public let columns: [AnswerColumn<Row>]
    /// The column names, in order.
    public let names: [String]

    public init(_ name: String, source: String, meaning: String, columns: [AnswerColumn<Row>]) {
        precondition(Set(columns.map(\.name)).count == columns.count, "answer \(name) names a column twice")
        self.name = name
        self.source = source
        self.meaning = meaning
        self.columns = columns
        self.names = columns.map(\.name)
    }

    /// The cells of `row`, in column order.
    @inlinable
    public func cells(_ row: Row) -> [QueryTable.Cell] { cells(row, skipping: -1) }

    /// The cells of `row`, with null for the column at `index` (one its writer takes from elsewhere).
    /// Inlinable and a plain loop: writers in other modules call it once per row of answers
    /// with millions of rows, and a generic closure per call would cost more than the cells.
    @inlinable
    public func cells(_ row: Row, skipping index: Int) -> [QueryTable.Cell] {
        var cells: [QueryTable.Cell] = []
        cells.reserveCapacity(columns.count)
        for i in columns.indices { cells.append(i == index ? .null : columns[i].value(row)) }
        return cells
    }

    /// `row` as the generic row the renderers lay out.
    public func tableRow(_ row: Row) -> QueryTable.Row { QueryTable.Row(columns: names, cells: cells(row)) }

    /// `rows` as a table in memory: for answers known to be small.
    public func table(_ rows: some Sequence<Row>) -> QueryTable {
        var table = QueryTable(columns: names)
        for row in rows { table.append(tableRow(row)) }
        return table
    }

    /// Starts writing this answer into `sink`. `preparing`, when given, is called on the reading
    /// thread with each batch of rows as it is handed over, and returns what completes the batch
    /// on the writing thread before it is written (keys read, then addresses opened, say).
    public func stream(into sink: any RowSink, preparing: (([Row]) throws -> (inout [Row]) throws -> Void)? = nil) throws -> AnswerStream<Row> {
        try AnswerStream(self, into: sink, preparing: preparing)
    }

    /// What the column reference lists about this answer.
    public var description: AnswerDescription {
        AnswerDescription(name: name, source: source, meaning: meaning, columns: columns.map(\.description))
    }
}

/// An answer's declaration without its row type.
public struct AnswerDescription: Sendable, Equatable {
    public let name: String
    public let source: String
    public let meaning: String
    public let columns: [ColumnDescription]
}

/// Writes one answer's typed rows into a sink as they are produced: the rows' cells are made
/// and written on a second thread, a batch at a time and in order, while the caller reads the
/// next rows (``BackgroundBatchWriter``).
public struct AnswerStream<Row> {
    let sink: any RowSink
    private let writer: BackgroundBatchWriter<Row>

    init(_ answer: Answer<Row>, into sink: any RowSink, preparing: (([Row]) throws -> (inout [Row]) throws -> Void)?) throws {
        self.sink = sink
        try sink.start(columns: answer.names)
        writer = .preparing { rows in
            let complete = try preparing?(rows)
            return { rows in
                var rows = rows
                try complete?(&rows)
                for row in rows { try sink.write(answer.tableRow(row)) }
            }
        }
    }

    /// Writes one row.
    public func append(_ row: Row) throws { try writer.append(row) }

    /// Ends the answer, once every row is written.
    public func finish() throws {
        try writer.finish()
        try sink.finish()
    }
}
