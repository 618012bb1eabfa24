import AppleID
import Basics
import Foundation
import Ledger
import Synchronization

/// Live counts of a run, shared by its workers, the error that stops it, and the progress
/// line drawn from them on a terminal: done/total, rate, ETA, failures.
public final class RunProgress: Sendable {
    /// The counts so far.
    struct Counts {
        var succeeded = 0
        var failed = 0
        var retries = 0
        var tokens = 0
        var abandoned = 0
        var failuresByClass: [String: Int] = [:]
        var stopReason: RunStop?
    }

    private let counts = Mutex(Counts())
    /// Users the run attempts.
    let total: Int
    private let started = ContinuousClock.now
    private let pace: ApplePace?

    init(total: Int, pace: ApplePace? = nil) {
        self.total = total
        self.pace = pace
    }

    /// How an attempted user counts once the event recording it is durable.
    enum Outcome: Sendable {
        case succeeded
        /// Failed, with the failure's class (`rate-limited`, ...).
        case failed(class: String)
    }

    /// Counts a user whose event is durable.
    func count(_ outcome: Outcome) {
        counts.withLock { c in
            switch outcome {
            case .succeeded: c.succeeded += 1
            case .failed(let name):
                c.failed += 1
                c.failuresByClass[name, default: 0] += 1
            }
        }
    }
    func retried() { counts.withLock { $0.retries += 1 } }
    func tokenIssued() { counts.withLock { $0.tokens += 1 } }
    func abandoned() { counts.withLock { $0.abandoned += 1 } }

    /// Stops the run: no worker takes another user. The first reason is kept; returns whether
    /// this one was it.
    @discardableResult
    func stop(_ reason: RunStop) -> Bool {
        counts.withLock { c in
            guard c.stopReason == nil else { return false }
            c.stopReason = reason
            return true
        }
    }
    var stopReason: RunStop? { counts.withLock { $0.stopReason } }
    /// The counts now.
    var snapshot: Counts { counts.withLock { $0 } }

    func fill(_ summary: inout RunSummary) {
        counts.withLock { c in
            summary.succeeded = c.succeeded
            summary.failed = c.failed
            summary.retries = c.retries
            summary.tokensIssued = c.tokens
            summary.abandoned = c.abandoned
            summary.failuresByClass = c.failuresByClass
        }
    }

    /// The progress line: `1234/5000 users  812/s  ETA 4s  failed 3  retried 12`, and while
    /// Apple is unavailable, for how long and why: `Apple unavailable for 2m10s (connection:
    /// …): waiting, no user failed for it`.
    public var line: String {
        let (done, failed, retries) = counts.withLock { ($0.succeeded + $0.failed, $0.failed, $0.retries) }
        let now = ContinuousClock.now
        let seconds = (now - started).inSeconds
        let rate = seconds > 0 ? Double(done) / seconds : 0
        let eta = rate > 0 ? Duration.seconds((Double(total - done) / rate).rounded(.up)).spoken : "-"
        var line = "\(done)/\(total) users  \(Int(rate))/s  ETA \(eta)  failed \(failed)  retried \(retries)"
        if let status = pace?.status, let since = status.unavailableSince, let cause = status.cause {
            line += "  Apple unavailable for \((now - since).spoken) (\(InertText.forScreen(cause.description))): waiting, no user failed for it"
        }
        return line
    }
}
