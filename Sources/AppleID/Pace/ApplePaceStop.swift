import Basics

/// Why a pace stopped a run: Apple asked for more patience than the run was given. Either
/// way nobody was lost; the next run resumes.
public enum ApplePaceStop: Error, Sendable, CustomStringConvertible {
    /// A `Retry-After` longer than the ceiling (`--max-retry-after`).
    case retryAfterBeyondCeiling(asked: Duration, ceiling: Duration, cause: AppleIDError)
    /// Apple unavailable for longer than the outage limit (`--outage-limit`).
    case outageLimit(lasted: Duration, limit: Duration, cause: AppleIDError)

    /// The failure that led to the stop.
    public var cause: AppleIDError {
        switch self {
        case .retryAfterBeyondCeiling(_, _, let cause), .outageLimit(_, _, let cause): cause
        }
    }

    public var description: String {
        switch self {
        case .retryAfterBeyondCeiling(let asked, let ceiling, let cause):
            "Apple asked to wait \(asked.spoken) (Retry-After), longer than the \(ceiling.spoken) allowed (--max-retry-after): \(cause)"
        case .outageLimit(let lasted, let limit, let cause):
            "Apple was unavailable for \(lasted.spoken), longer than the \(limit.spoken) allowed (--outage-limit): \(cause)"
        }
    }
}
