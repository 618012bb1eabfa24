import Basics
import PostgresNIO

/// What went wrong talking to PostgreSQL, in words: the server's message, SQLSTATE and
/// detail when it sent them, else the connection's error; never the password. And whether
/// it will go wrong again.
public enum PostgresFailure {
    /// The error in one line. The server's words quote the rows it refused (`Failing row
    /// contains (...)`), which hold outside text: they are shown inert, and cut at
    /// ``quotedLimit`` characters.
    public static func describe(_ error: any Error, target: PostgresTarget) -> String {
        guard let error = error as? PSQLError else { return target.redacting(InertText.forScreen(String(describing: error))) }
        var text: String
        if let info = error.serverInfo, let message = info[.message] {
            text = quoted(message)
            if let state = info[.sqlState] { text += " (SQLSTATE \(state))" }
            if let detail = info[.detail] { text += "; " + quoted(detail) }
            if let hint = info[.hint] { text += "; hint: " + quoted(hint) }
        } else if let underlying = error.underlying {
            text = InertText.forScreen("\(error.code): \(underlying)")
        } else {
            text = "\(error.code)"
        }
        return target.redacting(text)
    }

    /// The most characters of the server's text a message shows.
    public static let quotedLimit = 300

    private static func quoted(_ text: String) -> String {
        let inert = InertText.forScreen(text)
        return inert.count > quotedLimit ? String(inert.prefix(quotedLimit)) + "…" : inert
    }

    /// SQLSTATE classes of errors that the same statement meets again however often it is
    /// retried: data exceptions (22), integrity constraint violations (23), syntax errors and
    /// access rule violations (42, a table changed by hand or a privilege taken away), features
    /// not supported (0A), wrong credentials (28), a database or schema that does not exist
    /// (3D, 3F), WITH CHECK OPTION violations (44) and program limits exceeded (54, a row too
    /// large). Everything else (a connection lost, the server shutting down or out of room, a
    /// deadlock) may pass, and is retried.
    public static let permanentClasses: Set<String> = ["0A", "22", "23", "28", "3D", "3F", "42", "44", "54"]

    /// Whether PostgreSQL refused with an error of a ``permanentClasses`` class.
    public static func isPermanent(_ error: any Error) -> Bool {
        guard let state = (error as? PSQLError)?.serverInfo?[.sqlState] else { return false }
        return permanentClasses.contains(String(state.prefix(2)))
    }

    /// The line number in a COPY's error context (`COPY events, line 17, column ...`).
    public static func copyLine(in context: String) -> Int? {
        guard let range = context.range(of: ", line ") else { return nil }
        return Int(context[range.upperBound...].prefix { $0.isNumber })
    }
}
