import Foundation

/// How far the crash loops and loads go. `tools/test` runs them at a size that still kills a
/// run at several moments and still interleaves the writers; `tools/crash-loops` sets
/// `HANDOVER_TEST_FULL=1` and runs the same tests at their full size.
public enum TestSize {
    /// Whether `HANDOVER_TEST_FULL=1` is set.
    public static let isFull = ProcessInfo.processInfo.environment["HANDOVER_TEST_FULL"] == "1"

    /// `full` under `HANDOVER_TEST_FULL=1`, else `quick`.
    public static func pick(quick: Int, full: Int) -> Int { isFull ? full : quick }
}
