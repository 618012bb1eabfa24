import Foundation

/// How often and how patiently to retry transient failures (429, 5xx, timeouts, dropped
/// connections): exponential backoff with full jitter, never sooner than `Retry-After`.
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

    /// The wait before attempt `attempt + 1` after `error` on attempt `attempt` (1-based).
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
