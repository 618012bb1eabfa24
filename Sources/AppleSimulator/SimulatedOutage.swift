import Foundation

/// A stretch of time in which the stand-in answers every call the same failing way, as Apple
/// does in an outage or while it throttles: it begins once a number of calls have been
/// answered, and lasts a given time.
public struct SimulatedOutage: Sendable, Equatable {
    /// How each call is answered meanwhile.
    public enum Answer: Sendable, Equatable {
        /// This HTTP status (429 or 5xx), with Apple's error body.
        case status(Int)
        /// The connection closed without an answer.
        case dropped
    }

    /// Calls (to the token and migration endpoints) answered before it begins.
    public var afterCalls: Int
    /// How long it lasts.
    public var lasting: Duration
    public var answer: Answer
    /// The `Retry-After` sent with each answer, seconds; nil sends none.
    public var retryAfter: Int?

    public init(afterCalls: Int, lasting: Duration, answer: Answer, retryAfter: Int? = nil) {
        self.afterCalls = afterCalls
        self.lasting = lasting
        self.answer = answer
        self.retryAfter = retryAfter
    }

    /// `CALLS:SECONDS:ANSWER[:RETRY_AFTER]`, ANSWER being 429, a 5xx status or `drop`
    /// (`500:120:503:30`: after 500 calls, 2 minutes of 503 with `Retry-After: 30`).
    public init?(argument: String) {
        let parts = argument.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (3...4).contains(parts.count), let calls = Int(parts[0]), calls >= 0,
            let seconds = Double(parts[1]), seconds.isFinite, seconds > 0, seconds <= 86_400
        else { return nil }
        let answer: Answer
        if parts[2] == "drop" {
            answer = .dropped
        } else if let status = Int(parts[2]), status == 429 || (500...599).contains(status) {
            answer = .status(status)
        } else {
            return nil
        }
        var retryAfter: Int?
        if parts.count == 4 {
            guard let value = Int(parts[3]), (0...86_400).contains(value) else { return nil }
            retryAfter = value
        }
        self.init(afterCalls: calls, lasting: .milliseconds(Int64(seconds * 1000)), answer: answer, retryAfter: retryAfter)
    }
}
