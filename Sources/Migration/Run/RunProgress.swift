import AppleID
import Foundation
import Synchronization

/// Live counts of a run, shared by its workers, the error that stops it, and the progress
/// line drawn from them on a terminal: done/total, rate, ETA, failures.
public final class RunProgress: Sendable {
    private struct Counts {
        var succeeded = 0
        var failed = 0
        var retries = 0
        var tokens = 0
        var abandoned = 0
        var failuresByClass: [String: Int] = [:]
        var stopReason: AppleIDError?
    }

    private let counts = Mutex(Counts())
    private let total: Int
    private let started = ContinuousClock.now

    init(total: Int) { self.total = total }

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
            case .failed(let name): c.failed += 1; c.failuresByClass[name, default: 0] += 1
            }
        }
    }
    func retried() { counts.withLock { $0.retries += 1 } }
    func tokenIssued() { counts.withLock { $0.tokens += 1 } }
    func abandoned() { counts.withLock { $0.abandoned += 1 } }

    /// Stops the run: no worker takes another user. The first reason is kept.
    func stop(_ error: AppleIDError) { counts.withLock { if $0.stopReason == nil { $0.stopReason = error } } }
    var stopReason: AppleIDError? { counts.withLock { $0.stopReason } }

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

    /// The progress line: `1234/5000 users  812/s  ETA 4s  failed 3  retried 12`.
    public var line: String {
        let (done, failed, retries) = counts.withLock { ($0.succeeded + $0.failed, $0.failed, $0.retries) }
        let elapsed = ContinuousClock.now - started
        let seconds = elapsed.inSeconds
        let rate = seconds > 0 ? Double(done) / seconds : 0
        let eta = rate > 0 ? Int((Double(total - done) / rate).rounded(.up)) : 0
        let etaText = eta >= 60 ? "\(eta / 60)m\(eta % 60)s" : "\(eta)s"
        return "\(done)/\(total) users  \(Int(rate))/s  ETA \(etaText)  failed \(failed)  retried \(retries)"
    }
}
