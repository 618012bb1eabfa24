import Foundation

/// How often and how patiently to retry transient failures (429, 5xx, timeouts, dropped
/// connections): exponential backoff with equal jitter, never sooner than `Retry-After`.
///
/// The wait after attempt n is drawn uniformly from [c/2, c], where
/// c = min(`maximumDelay`, `baseDelay` × 2^(n−1)): half the backoff is kept and half is random
/// (AWS's "equal jitter"; "full jitter" would draw from [0, c]). A longer `Retry-After` replaces
/// the draw, and no wait is longer than `maximumDelay`. Keeping half means every retry backs off
/// from a server that is throttling or failing, and the attempts span a known minimum time (with
/// the defaults and no `Retry-After`, the 5 waits between 6 attempts add up to 3.875 s to 7.75 s)
/// instead of possibly all firing at once.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included.
    public var maximumAttempts: Int
    /// The first backoff's upper bound, seconds.
    public var baseDelay: Double
    /// The longest wait between attempts, seconds (a longer `Retry-After` is capped here).
    public var maximumDelay: Double

    public init(maximumAttempts: Int = 6, baseDelay: Double = 0.25, maximumDelay: Double = 30) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
    }

    /// The wait before attempt `attempt + 1` after `error` on attempt `attempt` (1-based), seconds:
    /// drawn from [c/2, c] with c = min(`maximumDelay`, `baseDelay` × 2^(attempt−1)), raised to
    /// the error's `Retry-After`, and capped at `maximumDelay`.
    public func delay(after attempt: Int, error: AppleIDError) -> Double {
        let ceiling = min(maximumDelay, baseDelay * pow(2, Double(attempt - 1)))
        let jittered = Double.random(in: (ceiling / 2)...max(ceiling / 2, ceiling))
        return min(maximumDelay, max(jittered, error.retryAfter ?? 0))
    }

    /// Runs `call` until it succeeds, fails for good, or attempts run out. The error thrown
    /// carries the number of attempts made. `onRetry` hears of each retry.
    public func run<T: Sendable>(
        onRetry: (AppleIDError, Int) -> Void = { _, _ in },
        _ call: () async throws -> T
    ) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await call()
            } catch var error as AppleIDError {
                error.attempts = attempt
                guard error.isTransient, attempt < maximumAttempts else { throw error }
                onRetry(error, attempt)
                try await Task.sleep(for: .milliseconds(Int(delay(after: attempt, error: error) * 1000)))
                attempt += 1
            }
        }
    }
}
