import Synchronization

/// Stops a run that fails nearly every user the same way: a mistake of the whole run (a
/// `target` that is not the recipient's team, the window not open, users of another app),
/// not of its users. It watches the classes of the users' failures that are Apple's refusals
/// (not throttling or outages, which the pace waits out): when one class is at least
/// ``Settings/share`` of the first ``Settings/firstCalls`` calls, or of any
/// ``Settings/window`` calls in a row, it trips.
public final class FailureBreaker: Sendable {
    /// When the breaker trips; nil settings turn it off.
    public struct Settings: Sendable, Equatable {
        /// The share of calls one failure class must reach, 0 to 1.
        public var share = 0.95
        /// The calls the first judgement waits for.
        public var firstCalls = 200
        /// The calls in a row judged after that.
        public var window = 500

        public init(share: Double = 0.95) { self.share = share }
    }

    /// A trip: the class that answered nearly every call, how often, and one of its failures.
    struct Trip: Sendable {
        let failureClass: String
        let count: Int
        let calls: Int
        let sample: String
    }

    private struct State {
        /// The class of each of the last `window` calls (nil for one that did not fail so).
        var recent: [String?] = []
        var next = 0
        var calls = 0
        var counts: [String: Int] = [:]
        var samples: [String: String] = [:]
        var tripped = false
    }

    let settings: Settings
    private let state = Mutex(State())

    init(_ settings: Settings) { self.settings = settings }

    /// Hears how a call ended: `failureClass` is its refusal's class, nil for a success (or a
    /// failure that is no refusal). Returns the trip, once, when this call trips the breaker.
    func record(_ failureClass: String?, message: String = "") -> Trip? {
        state.withLock { s in
            guard !s.tripped else { return nil }
            s.calls += 1
            if s.recent.count < settings.window {
                s.recent.append(failureClass)
            } else {
                if let old = s.recent[s.next] { s.counts[old, default: 0] -= 1 }
                s.recent[s.next] = failureClass
                s.next = (s.next + 1) % settings.window
            }
            if let failureClass {
                s.counts[failureClass, default: 0] += 1
                if s.samples[failureClass] == nil { s.samples[failureClass] = message }
            }
            let judged = s.calls == settings.firstCalls ? settings.firstCalls : s.calls >= settings.window ? settings.window : nil
            guard let judged, let (name, count) = s.counts.max(by: { $0.value < $1.value }),
                Double(count) >= settings.share * Double(judged)
            else { return nil }
            s.tripped = true
            return Trip(failureClass: name, count: count, calls: judged, sample: s.samples[name] ?? "")
        }
    }
}
