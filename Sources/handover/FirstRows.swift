import Projections

/// The first rows of an answer (`--limit`): passes `limit` rows on to a sink, and stops the
/// answer at the row after them, so that the answer costs what it shows and says whether
/// there were more.
final class FirstRows: RowSink {
    private struct Reached: Error {}

    private let sink: any RowSink
    private let limit: Int
    private var count = 0

    private init(_ sink: any RowSink, limit: Int) {
        self.sink = sink
        self.limit = limit
    }

    func start(columns: [String]) throws { try sink.start(columns: columns) }

    func write(_ row: QueryTable.Row) throws {
        guard count < limit else { throw Reached() }
        count += 1
        try sink.write(row)
    }

    func finish() throws { try sink.finish() }

    /// Runs `produce` into `sink`, through the first `limit` rows when there is a limit;
    /// returns whether rows were left out (the sink is then finished here).
    @discardableResult
    static func produce(_ limit: Int?, into sink: any RowSink, _ produce: (any RowSink) throws -> Void) throws -> Bool {
        guard let limit else {
            try produce(sink)
            return false
        }
        do {
            try produce(FirstRows(sink, limit: limit))
            return false
        } catch is Reached {
            try sink.finish()
            return true
        }
    }
}
