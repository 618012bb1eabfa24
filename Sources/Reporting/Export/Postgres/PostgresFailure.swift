import PostgresNIO

/// What went wrong talking to PostgreSQL, in words: the server's message, SQLSTATE and
/// detail when it sent them, else the connection's error; never the password. And whether
/// it will go wrong again.
enum PostgresFailure {
    static func describe(_ error: any Error, target: PostgresTarget) -> String {
        guard let error = error as? PSQLError else { return target.redacting(String(describing: error)) }
        var text: String
        if let info = error.serverInfo, let message = info[.message] {
            text = message
            if let state = info[.sqlState] { text += " (SQLSTATE \(state))" }
            if let detail = info[.detail] { text += "; " + detail }
            if let hint = info[.hint] { text += "; hint: " + hint }
        } else if let underlying = error.underlying {
            text = "\(error.code): \(underlying)"
        } else {
            text = "\(error.code)"
        }
        return target.redacting(text)
    }

    /// SQLSTATE classes of errors that the same statement meets again however often it is
    /// retried: data exceptions (22), integrity constraint violations (23), syntax errors and
    /// access rule violations (42, a table changed by hand or a privilege taken away), features
    /// not supported (0A), wrong credentials (28), a database or schema that does not exist
    /// (3D, 3F), WITH CHECK OPTION violations (44) and program limits exceeded (54, a row too
    /// large). Everything else (a connection lost, the server shutting down or out of room, a
    /// deadlock) may pass, and is retried.
    static let permanentClasses: Set<String> = ["0A", "22", "23", "28", "3D", "3F", "42", "44", "54"]

    /// Whether PostgreSQL refused with an error of a ``permanentClasses`` class.
    static func isPermanent(_ error: any Error) -> Bool {
        guard let state = (error as? PSQLError)?.serverInfo?[.sqlState] else { return false }
        return permanentClasses.contains(String(state.prefix(2)))
    }

    /// A refusal of a row of a COPY into `table` as an ``ExportError/Code/refused`` naming
    /// the row: `row` turns the line PostgreSQL names (1-based in the COPY) into words, such
    /// as the event's sequence. Nil when `error` is not a permanent refusal.
    static func refusal(_ error: any Error, table: String, row: (Int) -> String, target: PostgresTarget) -> ExportError? {
        guard isPermanent(error) else { return nil }
        let context = (error as? PSQLError)?.serverInfo?[.locationContext] ?? ""
        let which = copyLine(in: context).map { "\(row($0)) (COPY \(table), line \($0))" } ?? "a row of \(table)"
        return ExportError(.refused, "PostgreSQL refused \(which) in \(target.masked): \(describe(error, target: target))")
    }

    /// The line number in a COPY's error context (`COPY events, line 17, column ...`).
    static func copyLine(in context: String) -> Int? {
        guard let range = context.range(of: ", line ") else { return nil }
        return Int(context[range.upperBound...].prefix { $0.isNumber })
    }
}
