import ExitStatuses

/// A handoff package not issued, with what to do instead: bad usage (exit 2).
public struct HandoffIssueRefused: Error, Sendable, CustomStringConvertible, ExitStatusDeciding {
    public let description: String
    public init(_ description: String) { self.description = description }
    public var exitStatus: ExitStatus { .usage }
}
