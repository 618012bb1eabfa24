import ExitStatuses
import Ledger
import Synchronization

/// A request to end a run early, as Ctrl-C or SIGTERM makes it: the run takes no new user,
/// gives the calls in flight a grace period to finish and be recorded, then abandons the rest.
public final class RunInterruption: Sendable {
    /// The signal that asked, which also sets the exit status.
    public enum Signal: String, Sendable {
        case interrupt = "SIGINT"
        case terminate = "SIGTERM"

        /// 128 plus the signal number, as a shell reports a process that signal ended.
        public var exitStatus: ExitStatus { self == .interrupt ? .interrupted : .terminated }
    }

    /// What a request did.
    public enum Effect: Sendable {
        /// The first request: no new users; calls in flight get the grace period.
        case stopping
        /// A later request: calls still in flight are abandoned now.
        case cutShort
    }

    private struct State {
        var signal: Signal?
        var requestedAt: ContinuousClock.Instant?
        var cutShort = false
    }

    private let state = Mutex(State())

    public init() {}

    /// Asks the run to stop. The first request starts the grace period; any later one ends it.
    @discardableResult
    public func request(_ signal: Signal) -> Effect {
        state.withLock { s in
            guard s.signal == nil else {
                s.cutShort = true
                return .cutShort
            }
            s.signal = signal
            s.requestedAt = .now
            return .stopping
        }
    }

    /// The signal of the first request, if there was one.
    public var signal: Signal? { state.withLock { $0.signal } }

    /// Returns at the first request, or when the waiting task is cancelled.
    func waitForRequest() async {
        while !Task.isCancelled, signal == nil {
            // Cancellation is expected: the loop ends on it.
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Returns when calls still in flight must be abandoned: `grace` after the first request,
    /// or at a second request, whichever comes first; or when the waiting task is cancelled.
    func waitForCutOff(grace: Duration) async {
        while !Task.isCancelled {
            let due = state.withLock { s in s.cutShort || s.requestedAt.map { ContinuousClock.now - $0 >= grace } ?? false }
            if due { return }
            // Cancellation is expected: the loop ends on it.
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
