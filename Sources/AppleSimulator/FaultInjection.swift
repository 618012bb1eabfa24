/// Faults the stand-in injects into answers, to rehearse what Apple does under load.
public struct FaultInjection: Sendable {
    /// Added to every migration and token answer, milliseconds.
    public var latencyMilliseconds = 0
    /// Fraction of calls answered 429 with `Retry-After`.
    public var rateLimitedFraction = 0.0
    /// The `Retry-After` sent with a 429, seconds.
    public var retryAfterSeconds = 1
    /// Fraction of calls answered 500.
    public var serverErrorFraction = 0.0
    /// Fraction of calls whose connection is closed without an answer.
    public var droppedFraction = 0.0

    public init() {}

    /// What to do with one call.
    enum Decision { case answer, rateLimit, serverError, drop }

    func decide() -> Decision {
        let roll = Double.random(in: 0..<1)
        if roll < droppedFraction { return .drop }
        if roll < droppedFraction + rateLimitedFraction { return .rateLimit }
        if roll < droppedFraction + rateLimitedFraction + serverErrorFraction { return .serverError }
        return .answer
    }
}
