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
    /// `error_description`s sent with refusals in place of the stand-in's own words, taken in
    /// turn: to rehearse what Apple's free text does to everything that shows it.
    public var refusalDescriptions: [String] = []
    /// Outages, each a stretch of time in which every call fails the same way.
    public var outages: [SimulatedOutage] = []
    /// Access tokens refused (401 `invalid_token`) although they have not expired, as Apple
    /// does with a token it revoked; nil refuses none.
    public var tokenRevocation: TokenRevocation?
    /// Decides which calls get a 429, a 500 or a dropped connection from the seed and the call
    /// (``FaultSeed``); nil decides at random. Outages, latency and token revocation are timed or
    /// counted in arrival order either way.
    public var seed: FaultSeed?
    /// Once this many migration calls have arrived, every later one waits, unanswered, until
    /// `POST /simulator/release`: a run held part way at a known user, alive, deterministically.
    /// nil holds none.
    public var holdAfterCalls: Int?

    /// When the stand-in refuses access tokens it issued.
    public enum TokenRevocation: Sendable, Equatable {
        /// Once this many migration calls have been answered, every token issued until then is
        /// refused; tokens issued afterwards are accepted.
        case once(afterCalls: Int)
        /// Once this many migration calls have been answered, every token is refused, however new.
        case always(afterCalls: Int)
    }

    public init() {}

    /// What to do with one call.
    enum Decision { case answer, rateLimit, serverError, drop }

    /// The decision for a call whose roll (a number in [0, 1)) is `roll`.
    func decide(_ roll: Double) -> Decision {
        if roll < droppedFraction { return .drop }
        if roll < droppedFraction + rateLimitedFraction { return .rateLimit }
        if roll < droppedFraction + rateLimitedFraction + serverErrorFraction { return .serverError }
        return .answer
    }
}
