import PostgresNIO

/// What went wrong talking to PostgreSQL, in words: the server's message, SQLSTATE and
/// detail when it sent them, else the connection's error; never the password.
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
}
