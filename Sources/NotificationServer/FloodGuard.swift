import Basics
import Ledger
import Synchronization

/// `serve`'s budget for refused deliveries. Per source address and minute, the first
/// `budgetPerMinute` refusals are recorded one by one; the rest are answered 429 and summed up
/// in one "rejections summarized" event per source and minute, so a stream of forgeries
/// cannot grow the ledger without bound. Valid deliveries never reach it.
public final class FloodGuard: Sendable {
    private struct Window {
        let minute: Int64
        var recorded = 0
        var suppressed: [String: Int] = [:]
        var first = ""
        var last = ""

        func summary(source: String, until: Timestamp) -> RejectionsSummarized? {
            guard !suppressed.isEmpty else { return nil }
            return RejectionsSummarized(
                source: source, from: Timestamp(seconds: minute * 60), until: until, counts: suppressed,
                firstPayloadSHA256: first, lastPayloadSHA256: last)
        }

        var end: Timestamp { Timestamp(seconds: (minute + 1) * 60) }
    }

    /// Refusals recorded one by one per source and minute.
    public let budgetPerMinute: Int
    private let windows = Mutex<[String: Window]>([:])
    private let closed = Mutex<[RejectionsSummarized]>([])

    public init(budgetPerMinute: Int) {
        self.budgetPerMinute = budgetPerMinute
    }

    /// Whether a refusal from `source` on `route` is recorded as its own event; false: it is
    /// counted toward that source's summary for the minute.
    public func admit(source: String, route: String, payloadSHA256: String, at now: Timestamp = .now()) -> Bool {
        let minute = FloodGuard.minute(of: now)
        let (admitted, ended) = windows.withLock { windows -> (Bool, RejectionsSummarized?) in
            var ended: RejectionsSummarized?
            var window = windows[source] ?? Window(minute: minute)
            if window.minute != minute {
                ended = window.summary(source: source, until: window.end)
                window = Window(minute: minute)
            }
            defer { windows[source] = window }
            if window.recorded < budgetPerMinute {
                window.recorded += 1
                return (true, ended)
            }
            if window.suppressed.isEmpty { window.first = payloadSHA256 }
            window.suppressed[route, default: 0] += 1
            window.last = payloadSHA256
            return (false, ended)
        }
        if let ended { closed.withLock { $0.append(ended) } }
        return admitted
    }

    /// The whole minutes since 1970 at `time` (rounded down).
    private static func minute(of time: Timestamp) -> Int64 {
        time.seconds >= 0 ? time.seconds / 60 : (time.seconds - 59) / 60
    }

    /// Takes the summaries to record: of every minute that has ended by `now`, or with `all`
    /// (the server is stopping) also of the current one, cut at `now`.
    public func takeSummaries(at now: Timestamp = .now(), all: Bool = false) -> [RejectionsSummarized] {
        let current = FloodGuard.minute(of: now)
        var taken = closed.withLock { closed in
            defer { closed.removeAll() }
            return closed
        }
        windows.withLock { windows in
            for (source, window) in windows where window.minute < current || all {
                if let summary = window.summary(source: source, until: window.minute < current ? window.end : now) { taken.append(summary) }
                windows[source] = nil
            }
        }
        return taken.sorted { ($0.from, $0.source) < ($1.from, $1.source) }
    }
}
