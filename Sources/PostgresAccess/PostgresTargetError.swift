import Basics
import ExitStatuses

/// A PostgreSQL target named wrongly: a malformed URL, an unknown setting, a password file
/// others may read. Nothing was connected to.
public struct PostgresTargetError: Error, Sendable, CustomStringConvertible, ExitStatusDeciding {
    public let message: String
    /// The error this one reports (the file system's, TLS's).
    public let underlying: (any Error)?

    public init(_ message: String, underlying: (any Error)? = nil) {
        self.message = message
        self.underlying = underlying
    }

    public var description: String { underlying.map { "\(message): \(ErrorText.describing($0))" } ?? message }

    /// Usage, unless the underlying error decides otherwise (a password file that cannot be read).
    public var exitStatus: ExitStatus { (underlying as? any ExitStatusDeciding)?.exitStatus ?? .usage }
}
