import Synchronization

/// A request to end a following export: the run in progress finishes (or rolls back as a
/// whole), then the export ends.
public final class ExportStop: Sendable {
    private let requested = Mutex(false)

    public init() {}

    /// Asks the export to end after the run in progress.
    public func request() { requested.withLock { $0 = true } }

    /// Whether an end was asked for.
    public var isRequested: Bool { requested.withLock { $0 } }

    /// Waits `duration`, or less once an end is asked for (checked every 50 ms).
    func sleep(for duration: Duration) async {
        let deadline = ContinuousClock.now + duration
        while !isRequested && ContinuousClock.now < deadline {
            // Cancellation is expected: the wait ends on it.
            guard (try? await Task.sleep(for: min(.milliseconds(50), deadline - ContinuousClock.now))) != nil else { return }
        }
    }
}
