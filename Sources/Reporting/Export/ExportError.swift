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
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
