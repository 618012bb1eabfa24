/// A log read in short transactions, one at a time: what checking it end to end reads
/// through (``LogVerification``).
public protocol LogReading: Sendable {
    /// Calls `body` with a view of the log in one read transaction.
    func read<T>(_ body: (LogView) throws -> T) throws -> T
}
