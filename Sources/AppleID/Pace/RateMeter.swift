/// Calls a second, as a pace measures them: counted in whole-second windows, the last
/// complete window's count (or the current one's, when larger) being the rate, and the
/// highest rate seen kept as the peak.
struct RateMeter {
    private var windowStart = ContinuousClock.now
    private var inWindow = 0
    private var lastWindow = 0
    /// The highest rate measured so far, calls a second (at least 1).
    private(set) var peak: Double = 1

    /// Counts a call sent at `now`.
    mutating func count(at now: ContinuousClock.Instant) {
        roll(to: now)
        inWindow += 1
        peak = max(peak, Double(max(inWindow, lastWindow)))
    }

    /// The rate now, calls a second (at least 1).
    mutating func current(at now: ContinuousClock.Instant) -> Double {
        roll(to: now)
        return Double(max(1, inWindow, lastWindow))
    }

    private mutating func roll(to now: ContinuousClock.Instant) {
        let elapsed = now - windowStart
        guard elapsed >= .seconds(1) else { return }
        // A window with no call in it between leaves a last window of nothing.
        lastWindow = elapsed >= .seconds(2) ? 0 : inWindow
        inWindow = 0
        windowStart = now
    }
}
