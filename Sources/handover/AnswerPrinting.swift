import Basics
import Foundation
import Ledger
import Projections

/// Answers a compliance query from the projections, as committed or as they stood at
/// `--as-of` (read from the stored versions), collected in memory: for small answers.
func answer(
    _ ledger: Ledger, _ projection: UserProjection, _ output: OutputOptions, _ question: (ComplianceQueries) throws -> QueryTable
) throws -> QueryTable {
    try projection.read(ledger, asOf: output.asOf) { snapshot, _ in
        try question(ComplianceQueries(snapshot: snapshot, time: output.asOf ?? .now(), sealer: ledger.sealer))
    }
}

/// Opens the ledger, answers one question and writes its rows to standard output as they
/// are read, in a read transaction on a thread of its own. The table format reads the answer
/// twice: once for the column widths. With `limit`, the first `limit` rows, and a line on
/// standard error when there are more.
func printAnswer(
    _ command: any LedgerCommand, _ ledgerOptions: LedgerOptions, _ output: OutputOptions, limit: Int? = nil,
    _ question: @escaping @Sendable (ComplianceQueries, any RowSink) throws -> Void
) async throws {
    let (ledger, projection) = try ledgerOptions.open(.readOnly, for: command)
    defer { ledger.close() }
    let cut = try await projection.readInBackground(ledger, asOf: output.asOf) { snapshot, _ in
        let queries = ComplianceQueries(snapshot: snapshot, time: output.asOf ?? .now(), sealer: ledger.sealer)
        return try printRows(output.format, limit: limit) { try question(queries, $0) }
    }
    if cut, let limit { Console.error("the first \(counted(limit, "row")) (--limit \(limit)); there are more") }
}

/// Writes the rows `produce` gives to standard output in `format`, the first `limit` of them
/// when there is a limit; returns whether rows were left out. The table format calls `produce`
/// twice, once to size the columns, so it must give the same rows each time.
@discardableResult
func printRows(_ format: QueryTable.Format, limit: Int? = nil, _ produce: (any RowSink) throws -> Void) throws -> Bool {
    var widths: [Int]?
    if format == .table {
        let measure = ColumnWidths()
        try FirstRows.produce(limit, into: measure, produce)
        widths = measure.widths
    }
    let out = StandardOutput()
    let cut = try FirstRows.produce(limit, into: RowWriter(format, widths: widths, output: out.write), produce)
    try out.flush()
    return cut
}

/// Standard output written in 64 KiB blocks, with write errors (a closed pipe, a full disk)
/// raised instead of lost.
final class StandardOutput {
    private var buffer: [UInt8] = []

    init() {
        fflush(nil)  // whatever `print` buffered goes first
        buffer.reserveCapacity(1 << 16)
    }

    func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { try flush() }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        do { try FileHandle.standardOutput.write(contentsOf: buffer) } catch {
            throw CLIExit(.failed, "cannot write to standard output: \(error.localizedDescription)")
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
