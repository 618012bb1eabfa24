import Synchronization

/// One pace for every call a run makes to Apple, shared by all its workers: the gate each
/// attempt passes before it is sent, and the one place that hears how each ended.
///
/// - A `Retry-After` is honoured as given by every worker: no call before it has passed, up to
///   ``Settings/maximumRetryAfter``; a longer one stops the run (resumably) instead.
/// - Throttling, server errors and failed connections lower a shared rate (halved at most once
///   a second); each answer raises it again by one call a second, until no limit is left.
///   ``Settings/maximumRate`` caps it whatever Apple's health.
/// - A `Retry-After`, or ``Settings/failuresForOutage`` transient failures in a row with no
///   answer between, make Apple *unavailable*: the workers wait, and one probe at a time is sent,
///   after the `Retry-After` or at intervals doubling from ``Settings/firstProbeInterval`` to
///   ``Settings/longestProbeInterval``. The first answer ends it. A failure while Apple is
///   unavailable does not count against its user's attempts, so an outage loses nobody; one
///   longer than ``Settings/outageLimit`` stops the run (resumably).
///
/// Healthy, the gate costs a lock and no wait.
public final class ApplePace: Sendable {
    /// How patient the pace is.
    public struct Settings: Sendable {
        /// The longest `Retry-After` honoured; a longer one stops the run.
        public var maximumRetryAfter: Duration = .seconds(600)
        /// How long Apple may stay unavailable before the run stops.
        public var outageLimit: Duration = .seconds(900)
        /// Calls a second at most, whatever Apple's health; nil for no cap.
        public var maximumRate: Double?
        /// The lowest rate throttling or failures bring the pace to, calls a second.
        public var lowestRate: Double = 1
        /// Transient failures in a row, with no answer between, that make Apple unavailable.
        public var failuresForOutage = 3
        /// The wait before the first probe of an outage without `Retry-After`; it doubles each probe.
        public var firstProbeInterval: Duration = .milliseconds(250)
        /// The longest wait between probes.
        public var longestProbeInterval: Duration = .seconds(30)

        public init() {}
    }

    /// What the pace knows of Apple now, for a progress line.
    public struct Status: Sendable {
        /// Since when Apple has been unavailable, and the failure that says why; nil while it answers.
        public var unavailableSince: ContinuousClock.Instant?
        public var cause: AppleIDError?
    }

    /// What a run's pauses came to, as "run finished" records them.
    public struct Pauses: Sendable, Equatable {
        /// How many times Apple became unavailable.
        public var count = 0
        /// How long the run waited for Apple in all.
        public var total: Duration = .zero
        /// Calls that failed transiently (throttled, a server error, no connection), retried or not.
        public var callsRefused = 0
    }

    /// A change of Apple's availability, as a run announces it once.
    public enum Change: Sendable {
        /// Apple stopped answering, for this cause: the workers wait.
        case unavailable(cause: AppleIDError)
        /// Apple answers again after `after`.
        case available(after: Duration)
    }

    /// A pass through the gate: whether it was the outage's probe, and when it was given.
    public struct Admission: Sendable {
        let isProbe: Bool
        /// Whether Apple was unavailable when the call was let through.
        let duringOutage: Bool
        /// When it was let through.
        let at: ContinuousClock.Instant
    }

    private struct Outage {
        var since: ContinuousClock.Instant
        var cause: AppleIDError
        var probeInFlight = false
        var nextProbeAt: ContinuousClock.Instant
        var probeInterval: Duration
    }

    private struct State {
        var openAt: ContinuousClock.Instant?
        var failuresInARow = 0
        var outage: Outage?
        var rateLimit: Double?
        var nextSlot = ContinuousClock.now
        var lastDecrease: ContinuousClock.Instant?
        var rate = RateMeter()
        var stop: ApplePaceStop?
        var halted = false
        var pauses = Pauses()
    }

    public let settings: Settings
    private let state = Mutex(State())
    private let onChange: @Sendable (Change) -> Void

    /// - Parameter onChange: hears once when Apple becomes unavailable and once when it answers again.
    public init(_ settings: Settings = Settings(), onChange: @escaping @Sendable (Change) -> Void = { _ in }) {
        self.settings = settings
        self.onChange = onChange
    }

    /// Returns when a call may be sent. Throws ``ApplePaceStop`` once the pace has stopped the
    /// run, and `CancellationError` once it is halted or the task is cancelled.
    public func admit() async throws -> Admission {
        while true {
            let decision = state.withLock { s in decide(&s, now: .now) }
            switch decision {
            case .go(let admission): return admission
            case .goAt(let slot, let admission):
                // The slot is this caller's: it waits for it and goes, whatever happens meanwhile.
                try await Task.sleep(until: slot, clock: .continuous)
                return admission
            case .stopped(let stop): throw stop
            case .halted: throw CancellationError()
            case .wait(let wait):
                // Short naps, so that a halt or a stop is heard within a quarter of a second.
                try await Task.sleep(for: min(wait, .milliseconds(250)))
            }
        }
    }

    private enum Decision {
        case go(Admission)
        case goAt(ContinuousClock.Instant, Admission)
        case wait(Duration)
        case stopped(ApplePaceStop)
        case halted
    }

    private func decide(_ s: inout State, now: ContinuousClock.Instant) -> Decision {
        if s.halted { return .halted }
        if let stop = s.stop { return .stopped(stop) }
        if let openAt = s.openAt {
            if now < openAt { return .wait(openAt - now) }
            s.openAt = nil
        }
        if var outage = s.outage {
            if let stop = outageStop(outage, now: now) {
                s.stop = stop
                return .stopped(stop)
            }
            if outage.probeInFlight { return .wait(.milliseconds(50)) }
            if now < outage.nextProbeAt { return .wait(outage.nextProbeAt - now) }
            outage.probeInFlight = true
            s.outage = outage
            return .go(Admission(isProbe: true, duringOutage: true, at: now))
        }
        let admission = Admission(isProbe: false, duringOutage: false, at: now)
        s.rate.count(at: now)
        if let limit = allowedRate(s) {
            let slot = max(now, s.nextSlot)
            s.nextSlot = slot + .seconds(1 / limit)
            if slot > now { return .goAt(slot, admission) }
        }
        return .go(admission)
    }

    /// Calls a second allowed now: the lower of the shared rate and the cap; nil for no limit.
    private func allowedRate(_ s: State) -> Double? {
        guard let limit = s.rateLimit else { return settings.maximumRate }
        return min(limit, settings.maximumRate ?? limit)
    }

    private func outageStop(_ outage: Outage, now: ContinuousClock.Instant) -> ApplePaceStop? {
        let lasted = now - outage.since
        return lasted > settings.outageLimit ? .outageLimit(lasted: lasted, limit: settings.outageLimit, cause: outage.cause) : nil
    }

    /// Apple answered the call (with success or a refusal of this user alone): an outage ends,
    /// unless the call was sent before it began (an answer already on its way then says nothing
    /// of Apple now), and the rate rises by one call a second.
    public func answered(_ admission: Admission) {
        let ended: Duration? = state.withLock { s in
            s.failuresInARow = 0
            if let limit = s.rateLimit {
                let raised = limit + 1
                s.rateLimit = raised >= s.rate.peak * 2 ? nil : raised
            }
            guard let outage = s.outage, admission.at >= outage.since else { return nil }
            s.outage = nil
            let lasted = ContinuousClock.now - outage.since
            s.pauses.total += lasted
            return lasted
        }
        if let ended { onChange(.available(after: ended)) }
    }

    /// The call failed with `error`. For a transient failure, returns whether it counts against
    /// its user's attempts: only when Apple was answering before and after it. Anything else is
    /// an answer (see ``answered(_:)``) and counts.
    public func failed(_ error: AppleIDError, _ admission: Admission) -> Bool {
        guard error.isTransient else {
            answered(admission)
            return true
        }
        let now = ContinuousClock.now
        let (counts, began): (Bool, AppleIDError?) = state.withLock { s in
            s.failuresInARow += 1
            s.pauses.callsRefused += 1
            // While Apple is unavailable the probes set the pace; the rate is lowered only by
            // failures among answers.
            if s.outage == nil, s.lastDecrease.map({ now - $0 >= .seconds(1) }) ?? true {
                s.rateLimit = max(settings.lowestRate, (s.rateLimit ?? s.rate.current(at: now)) / 2)
                s.lastDecrease = now
            }
            var retryAfter: Duration?
            if let seconds = error.retryAfter, seconds > 0 {
                let wait = Duration.seconds(seconds)
                guard wait <= settings.maximumRetryAfter else {
                    if s.stop == nil { s.stop = .retryAfterBeyondCeiling(asked: wait, ceiling: settings.maximumRetryAfter, cause: error) }
                    return (false, nil)
                }
                retryAfter = wait
                s.openAt = max(s.openAt ?? now, now + wait)
            }
            var began: AppleIDError?
            if var outage = s.outage {
                if admission.isProbe {
                    outage.probeInFlight = false
                    outage.nextProbeAt = max(s.openAt ?? now, now + outage.probeInterval)
                    outage.probeInterval = min(outage.probeInterval * 2, settings.longestProbeInterval)
                }
                outage.cause = error
                s.outage = outage
                if s.stop == nil, let stop = outageStop(outage, now: now) { s.stop = stop }
            } else if retryAfter != nil || s.failuresInARow >= settings.failuresForOutage {
                s.outage = Outage(
                    since: now, cause: error, nextProbeAt: s.openAt ?? now + settings.firstProbeInterval,
                    probeInterval: min(settings.firstProbeInterval * 2, settings.longestProbeInterval))
                s.pauses.count += 1
                began = error
            }
            return (!admission.duringOutage && s.outage == nil, began)
        }
        if let began { onChange(.unavailable(cause: began)) }
        return counts
    }

    /// The call let through by `admission` ended without an answer or a failure of Apple's (it
    /// was cancelled, or what it prepared failed here): a probe's place goes to the next caller.
    public func abandoned(_ admission: Admission) {
        guard admission.isProbe else { return }
        state.withLock { s in s.outage?.probeInFlight = false }
    }

    /// Ends every wait at once: ``admit()`` throws `CancellationError` from now on (a run
    /// interrupted takes no new call).
    public func halt() { state.withLock { $0.halted = true } }

    /// Apple's availability now.
    public var status: Status {
        state.withLock { s in Status(unavailableSince: s.outage?.since, cause: s.outage?.cause) }
    }

    /// The pauses so far, an outage still going on counted up to now.
    public var pauses: Pauses {
        state.withLock { s in
            var pauses = s.pauses
            if let outage = s.outage { pauses.total += ContinuousClock.now - outage.since }
            return pauses
        }
    }
}
