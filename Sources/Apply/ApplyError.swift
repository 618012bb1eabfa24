import ExitStatuses
import Ledger

/// Why `apply` cannot go on, with a code callers match and the exit status it means.
public struct ApplyError: Error, Sendable, CustomStringConvertible, ExitStatusDeciding {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The mapping or the options are wrong.
        public static let usage = Code(rawValue: "usage")
        /// The app's database cannot be opened, read or written.
        public static let target = Code(rawValue: "target")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
    public var exitStatus: ExitStatus { .usage }
}
