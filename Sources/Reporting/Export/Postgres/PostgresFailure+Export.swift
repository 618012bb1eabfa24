import Ledger
import LogEngine
import PostgresAccess
import PostgresNIO

extension PostgresFailure {
    /// `error`, met while doing `what` (`"export into"`, `"connect to"`) to `target`, as the
    /// export reports it. An ``ExportError`` or a ``LedgerError`` (the ledger could not be read:
    /// the same would fail again) stays as it is. Anything else becomes an ``ExportError``
    /// naming the target only masked: ``ExportError/Code/refused`` when PostgreSQL would refuse
    /// the same again, naming the row when it refused a row of a COPY (`copying`: the table, and
    /// the words for the row at a 1-based line, such as the event's sequence), and
    /// ``ExportError/Code/io`` when it may pass.
    static func exportError(
        _ error: any Error, doing what: String, target: PostgresTarget,
        copying: (table: String, row: (Int) -> String)? = nil
    ) -> any Error {
        if error is ExportError || error is LedgerError { return error }
        guard isPermanent(error) else {
            return ExportError(.io, "cannot \(what) \(target.masked): \(describe(error, target: target))", describing: error)
        }
        if let (table, row) = copying, let line = copyLine(in: (error as? PSQLError)?.serverInfo?[.locationContext] ?? "") {
            return ExportError(
                .refused, "PostgreSQL refused \(row(line)) (COPY \(table), line \(line)) in \(target.masked): \(describe(error, target: target))",
                describing: error)
        }
        return ExportError(.refused, "cannot \(what) \(target.masked): \(describe(error, target: target))", describing: error)
    }
}
