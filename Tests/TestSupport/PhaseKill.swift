import Foundation

/// A kill test's round: the process is sent SIGKILL once the phase the test means to interrupt
/// has begun, so that a kill lands where the test says it does, on a fast machine as on a busy
/// one. The test then reads what the process left (the ledger, the scratch directory, the
/// database) to say where the kill landed, and counts only the kills that landed in its phase.
public enum PhaseKill {
    /// How long a round waits for its phase at most: only a hang takes that long.
    public static let deadline: TimeInterval = 120

    /// Waits until `begun()` says the phase has begun or the process has ended (polling every
    /// half millisecond, blocking: when the kill goes out must not depend on this process's
    /// busy task pool), then after a random pause of up to `spread` microseconds sends SIGKILL
    /// and waits for the process. Whether the kill ended it (it was still running), and what it
    /// printed.
    @discardableResult
    public static func kill(
        _ process: RunningProduct, once begun: () throws -> Bool, spread: UInt32
    ) rethrows -> (
        signalled: Bool, status: Int32, out: String, err: String
    ) {
        let started = Date()
        while process.isRunning, try !begun(), Date().timeIntervalSince(started) < deadline { usleep(500) }
        if spread > 0 { usleep(UInt32.random(in: 0...spread)) }
        process.signal(SIGKILL)
        let ended = process.wait()
        return (ended.signalled, ended.status, ended.out, ended.err)
    }

    /// The landed kills' count against the rounds, for a test's message: "4 of 6 rounds landed
    /// while the fold ran (others: 2 finished first)".
    public static func tally(_ landed: Int, of rounds: Int, in phase: String) -> String {
        "\(landed) of \(rounds) rounds killed the process \(phase); \(rounds - landed) did not (it had finished, or not begun)"
    }
}
