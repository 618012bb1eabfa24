import Synchronization

/// The stand-in's outages in the order they come, and every call that arrived during one:
/// which the tests read to see that no call came sooner than a `Retry-After` allowed.
public final class OutageSchedule: Sendable {
    /// A call that arrived during an outage.
    public struct Call: Sendable {
        /// Which outage (its place in the schedule).
        public let outage: Int
        /// When the call arrived.
        public let at: ContinuousClock.Instant
        /// When the outage began.
        public let outageBegan: ContinuousClock.Instant
    }

    private struct State {
        var answered = 0
        var next = 0
        var active: (index: Int, began: ContinuousClock.Instant, ends: ContinuousClock.Instant)?
        var calls: [Call] = []
    }

    public let outages: [SimulatedOutage]
    private let state = Mutex(State())

    public init(_ outages: [SimulatedOutage]) { self.outages = outages.sorted { $0.afterCalls < $1.afterCalls } }

    /// The outage a call arriving now meets, if any, the call recorded with it; otherwise the
    /// call counts towards the next outage's start.
    func meet(now: ContinuousClock.Instant = .now) -> SimulatedOutage? {
        guard !outages.isEmpty else { return nil }
        return state.withLock { s in
            if let active = s.active, now >= active.ends { s.active = nil }
            if s.active == nil, s.next < outages.count, s.answered >= outages[s.next].afterCalls {
                s.active = (s.next, now, now + outages[s.next].lasting)
                s.next += 1
            }
            guard let active = s.active else {
                s.answered += 1
                return nil
            }
            if s.calls.count < 1_000_000 { s.calls.append(Call(outage: active.index, at: now, outageBegan: active.began)) }
            return outages[active.index]
        }
    }

    /// Every call that arrived during an outage, in arrival order.
    public var calls: [Call] { state.withLock { $0.calls } }
}
