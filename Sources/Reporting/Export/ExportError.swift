import Basics
import ExitStatuses
import Ledger

/// Why an export was refused or failed; `code` lets callers tell usage from I/O.
public struct ExportError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The output exists and `--since-last` was not given.
        public static let outputExists = Code(rawValue: "output-exists")
        /// The output holds another ledger's export, or one with another personal-data policy.
        public static let mismatch = Code(rawValue: "mismatch")
        /// The output cannot be read or written.
        public static let io = Code(rawValue: "io")
        /// The output is named wrongly (a malformed URL, an unknown setting, a loose password file).
        public static let usage = Code(rawValue: "usage")
        /// Another exporter is writing into the same database.
        public static let busy = Code(rawValue: "busy")
        /// The database refused what was written in a way that will recur on the same rows (a
        /// constraint, a type, a privilege): retrying cannot help.
        public static let refused = Code(rawValue: "refused")
        /// The export's own rule was broken (a bug): retrying cannot help.
        public static let `internal` = Code(rawValue: "internal")
    }

    public let code: Code
    public private(set) var message: String
    /// The error this one reports (PostgreSQL's with its SQLSTATE, SQLite's, the file
    /// system's), for callers to match; ``description`` prints it after the message.
    public let underlying: (any Error)?

    /// Whether `message` already says what `underlying` is, in words fit to show.
    private let messageDescribesUnderlying: Bool

    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.messageDescribesUnderlying = false
    }

    /// An error whose message already describes `underlying` in words fit to show: PostgreSQL's
    /// errors, whose own description says nothing and whose details name the target unmasked.
    init(_ code: Code, _ message: String, describing underlying: any Error) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.messageDescribesUnderlying = true
    }

    /// The same error, its message followed by `addition`.
    func adding(_ addition: String) -> ExportError {
        var error = self
        error.message += addition
        return error
    }

    /// The message, then the underlying error's own description when the message does not
    /// already say it.
    public var description: String {
        guard let underlying, !messageDescribesUnderlying else { return message }
        return "\(message): \(ErrorText.describing(underlying))"
    }
}

extension ExportError: ExitStatusDeciding {
    /// An output that exists, belongs to another export or is named wrongly is usage; a record
    /// of the ledger that cannot be read back is an integrity failure; the rest failed.
    public var exitStatus: ExitStatus {
        if let cause = underlying as? any ExitStatusDeciding { return cause.exitStatus }
        switch code {
        case .outputExists, .mismatch, .usage: return .usage
        default: return .failed
        }
    }
}
