import ExitStatuses

/// A problem with an input file, naming the file and line.
public struct InputProblem: Error, Sendable, CustomStringConvertible, Hashable {
    public let file: String
    /// 1-based; nil for problems with the file as a whole.
    public let line: Int?
    public let message: String

    public init(file: String, line: Int?, _ message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String {
        line.map { "\(file), line \($0): \(message)" } ?? "\(file): \(message)"
    }
}

/// Every problem found in an input file (all are reported, not only the first).
public struct InputProblems: Error, Sendable, CustomStringConvertible, ExitStatusDeciding {
    public let problems: [InputProblem]
    public var description: String { problems.map(\.description).joined(separator: "\n") }
    /// Bad input: nothing was done (exit 2).
    public var exitStatus: ExitStatus { .usage }
    public var exitMessage: String? { "the input file has problems; nothing was recorded or written:\n" + description }
}
