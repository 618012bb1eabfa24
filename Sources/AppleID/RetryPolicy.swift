import Foundation

/// How a user's call is retried: transient failures (429, 5xx, timeouts, dropped connections)
/// with exponential backoff and equal jitter while Apple answers other calls, and without
/// limit while the ``ApplePace`` finds Apple unavailable (the pace holds every call until it
/// answers again, honouring `Retry-After`).
///
/// The wait after counted attempt n is drawn uniformly from [c/2, c], where
/// c = min(`maximumDelay`, `baseDelay` × 2^(n−1)): half the backoff is kept and half is random
/// (AWS's "equal jitter"; "full jitter" would draw from [0, c]). Keeping half means every retry
/// backs off, and the attempts span a known minimum time (with the defaults, the 5 waits between
/// 6 attempts add up to 3.875 s to 7.75 s) instead of possibly all firing at once. A failure
/// while Apple is unavailable is not counted: an outage fails nobody.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included, that count against a user.
    public var maximumAttempts: Int
    /// The first backoff's upper bound, seconds.
    public var baseDelay: Double
    /// The longest backoff between a user's attempts, seconds (`Retry-After` is the pace's).
    public var maximumDelay: Double

    public init(maximumAttempts: Int = 6, baseDelay: Double = 0.25, maximumDelay: Double = 30) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
    }

    /// The backoff before attempt `attempt + 1` after counted attempt `attempt` (1-based),
    /// seconds: drawn from [c/2, c] with c = min(`maximumDelay`, `baseDelay` × 2^(attempt−1)).
    public func delay(after attempt: Int) -> Double {
        let ceiling = min(maximumDelay, baseDelay * pow(2, Double(min(attempt, 64) - 1)))
        return Double.random(in: (ceiling / 2)...max(ceiling / 2, ceiling))
    }

    /// Runs `call` through `pace` until it succeeds, fails for good, or its counted attempts run
    /// out. The error thrown carries the number of calls made. `onRetry` hears of each retry.
    public func run<T: Sendable>(
        pace: ApplePace, onRetry: (AppleIDError, Int) -> Void = { _, _ in }, _ call: () async throws -> T
    ) async throws -> T {
        try await run(pace: pace, onRetry: onRetry, preparing: { _ in () }, { _ in try await call() })
    }

    /// Runs `call` with what `prepare` gives before each attempt (outside the pace's gate: an
    /// access token, which has a pace of its own to pass), as ``run(pace:onRetry:_:)``. A 401
    /// `invalid_token` is retried once at once and uncounted, `prepare` being told of it (to
    /// renew the token); a second in a row is thrown.
    public func run<Prepared: Sendable, T: Sendable>(
        pace: ApplePace, onRetry: (AppleIDError, Int) -> Void = { _, _ in },
        preparing prepare: (_ refused: Prepared?) async throws -> Prepared, _ call: (Prepared) async throws -> T
    ) async throws -> T {
        var attempt = 1
        var calls = 0
        var refused: Prepared?
        while true {
            let prepared = try await prepare(refused)
            let admission = try await pace.admit()
            calls += 1
            do {
                let value = try await call(prepared)
                pace.answered(admission)
                return value
            } catch var error as AppleIDError {
                error.attempts = calls
                let counts = pace.failed(error, admission)
                if error.code == .invalidToken, refused == nil {
                    refused = prepared
                    continue
                }
                refused = nil
                if error.code == .invalidToken {
                    error.message = "Apple refused a new access token right after refusing the one before: \(error.message)"
                }
                guard error.isTransient else { throw error }
                if counts {
                    guard attempt < maximumAttempts else { throw error }
                    onRetry(error, attempt)
                    try await Task.sleep(for: .seconds(delay(after: attempt)))
                    attempt += 1
                } else {
                    // Apple is unavailable: the pace holds the next attempt until it answers again.
                    onRetry(error, attempt)
                }
            } catch {
                pace.abandoned(admission)
                throw error
            }
        }
    }
}
