import Basics
import Foundation
import Ledger
import Testing

@testable import AppleID

/// ``RetryPolicy``: exponential backoff with equal jitter, as its documentation says, and which
/// errors it retries how often. No network: the calls are closures, the waits a millisecond.
@Suite("retry policy")
struct RetryPolicyTests {
    /// An error of `code`, as an attempt throws it.
    static func error(_ code: FailureClass, retryAfter: Double? = nil) -> AppleIDError {
        AppleIDError(code, "test \(code.rawValue)", httpStatus: 503, retryAfter: retryAfter)
    }

    static let transient: [FailureClass] = [.rateLimited, .serverError, .timeout, .connection]
    static let final: [FailureClass] = [.invalidRequest, .invalidClient, .invalidGrant, .invalidResponse, .invalidConfiguration, .other]

    /// A policy whose waits are about a millisecond.
    static let quick = RetryPolicy(maximumAttempts: 4, baseDelay: 0.001, maximumDelay: 0.002)

    /// A pace that never finds Apple unavailable (as when other calls are answered), or one
    /// whose outage sets in after `outageAfter` failures, probes every few milliseconds and
    /// gives up after `limit`.
    static func pace(outageAfter: Int = 1_000, limit: Duration = .seconds(3_600), retryAfterCeiling: Duration = .seconds(60)) -> ApplePace {
        var settings = ApplePace.Settings()
        settings.failuresForOutage = outageAfter
        settings.firstProbeInterval = .milliseconds(5)
        settings.longestProbeInterval = .milliseconds(20)
        settings.outageLimit = limit
        settings.maximumRetryAfter = retryAfterCeiling
        settings.lowestRate = 10_000
        return ApplePace(settings)
    }

    @Test("each wait lies in [c/2, c], c = min(maximumDelay, baseDelay × 2^(attempt−1)), and the draws cover that interval (equal jitter, not full)")
    func delaysLieInTheDocumentedInterval() {
        let policy = RetryPolicy()
        for attempt in 1...12 {
            let ceiling = min(policy.maximumDelay, policy.baseDelay * pow(2, Double(attempt - 1)))
            let draws = (0..<2_000).map { _ in policy.delay(after: attempt) }
            let low = draws.min() ?? -1
            let high = draws.max() ?? -1
            #expect(low >= ceiling / 2 && high <= ceiling, "attempt \(attempt): draws in [\(low), \(high)], documented [\(ceiling / 2), \(ceiling)]")
            // 2,000 uniform draws all missing the interval's lowest or highest tenth: about 1 in 10^91.
            #expect(
                low < ceiling / 2 + ceiling / 20 && high > ceiling - ceiling / 20,
                "attempt \(attempt): draws in [\(low), \(high)] do not cover [\(ceiling / 2), \(ceiling)]")
        }
    }

    @Test("the defaults: 6 attempts, waits of 0.125–0.25 s doubling to 2–4 s, 30 s at most however late the attempt")
    func defaultsAndCap() {
        let policy = RetryPolicy()
        #expect(policy.maximumAttempts == 6 && policy.baseDelay == 0.25 && policy.maximumDelay == 30)
        let first = policy.delay(after: 1)
        let fifth = policy.delay(after: 5)
        #expect((0.125...0.25).contains(first) && (2...4).contains(fifth), "\(first) \(fifth)")
        for attempt in [9, 10, 20, 64, 2_000] {
            let wait = policy.delay(after: attempt)
            #expect((15...30).contains(wait), "attempt \(attempt): \(wait)")
        }
        #expect(RetryPolicy(maximumAttempts: 0).maximumAttempts == 1, "at least the first attempt")
    }

    @Test("a Retry-After of 2 s is honoured as given (no 30-second cap any more, no sooner call), and the call then succeeds")
    func retryAfterHonoured() async throws {
        let pace = Self.pace()
        var calls: [ContinuousClock.Instant] = []
        let value = try await Self.quick.run(pace: pace) { () async throws -> Int in
            calls.append(.now)
            if calls.count == 1 { throw Self.error(.rateLimited, retryAfter: 2) }
            return 7
        }
        #expect(value == 7 && calls.count == 2)
        #expect(calls[1] - calls[0] >= .seconds(2), "the second call came \(calls[1] - calls[0]) after the first")
    }

    @Test("a Retry-After beyond the ceiling stops at once, after one call: the pace's stop, naming both")
    func retryAfterBeyondCeiling() async throws {
        var calls = 0
        let thrown = await #expect(throws: ApplePaceStop.self) {
            try await Self.quick.run(pace: Self.pace(retryAfterCeiling: .seconds(60))) { () async throws -> Int in
                calls += 1
                throw Self.error(.serverError, retryAfter: 3_600)
            }
        }
        #expect(calls == 1)
        guard case .retryAfterBeyondCeiling(let asked, let ceiling, _)? = thrown else {
            Issue.record("\(String(describing: thrown))")
            return
        }
        #expect(asked == .seconds(3_600) && ceiling == .seconds(60))
        #expect(thrown?.description.contains("--max-retry-after") == true)
    }

    @Test("an outage fails nobody: 40 failures in a row are waited out (not counted against the 4 attempts) and the call succeeds")
    func outageWaitedOut() async throws {
        var calls = 0
        let value = try await Self.quick.run(pace: Self.pace(outageAfter: 3)) { () async throws -> String in
            calls += 1
            if calls <= 40 { throw Self.error(.connection) }
            return "done"
        }
        #expect(value == "done" && calls == 41)
    }

    @Test("an outage longer than the limit stops the call with the pace's stop, naming the cause; the probes are spaced, not a storm")
    func outageLimit() async throws {
        var calls = 0
        let started = ContinuousClock.now
        let thrown = await #expect(throws: ApplePaceStop.self) {
            try await Self.quick.run(pace: Self.pace(outageAfter: 3, limit: .milliseconds(400))) { () async throws -> Int in
                calls += 1
                throw Self.error(.serverError)
            }
        }
        guard case .outageLimit(let lasted, let limit, let cause)? = thrown else {
            Issue.record("\(String(describing: thrown))")
            return
        }
        #expect(lasted > limit && cause.code == .serverError)
        // At least 400 ms at probes 20 ms apart at most: no more than 3 + 400/5 calls can fit, whatever the machine's speed.
        #expect(calls <= 3 + 80 && ContinuousClock.now - started >= .milliseconds(400), "\(calls) calls")
    }

    @Test(
        "while Apple answers other calls, a transient error is retried until maximumAttempts, each retry heard once; the error thrown counts the attempts",
        arguments: transient)
    func transientRetriedToTheLimit(code: FailureClass) async throws {
        var calls = 0
        var heard: [Int] = []
        let thrown = await #expect(throws: AppleIDError.self) {
            try await Self.quick.run(
                pace: Self.pace(),
                onRetry: { error, attempt in
                    #expect(error.code == code)
                    heard.append(attempt)
                }
            ) { () async throws -> Int in
                calls += 1
                throw Self.error(code)
            }
        }
        #expect(calls == 4 && heard == [1, 2, 3])
        #expect(thrown?.code == code && thrown?.attempts == 4, "\(String(describing: thrown))")
    }

    @Test("an error that is not transient is thrown at once, after one attempt", arguments: final)
    func finalNotRetried(code: FailureClass) async throws {
        var calls = 0
        var retries = 0
        let thrown = await #expect(throws: AppleIDError.self) {
            try await Self.quick.run(pace: Self.pace(), onRetry: { _, _ in retries += 1 }) { () async throws -> Int in
                calls += 1
                throw Self.error(code)
            }
        }
        #expect(calls == 1 && retries == 0 && thrown?.code == code && thrown?.attempts == 1)
    }

    @Test(
        "invalid_token: the call is made once more at once with what prepare renews (told of the refused one), uncounted; a second in a row is thrown, saying so"
    )
    func refusedTokenRenewedOnce() async throws {
        var prepared: [Int?] = []
        let renewed = try await Self.quick.run(
            pace: Self.pace(),
            preparing: { refused in
                prepared.append(refused)
                return (refused ?? 0) + 1
            }
        ) { token async throws -> Int in
            if token == 1 { throw AppleIDError(.invalidToken, "revoked", httpStatus: 401) }
            return token
        }
        #expect(renewed == 2 && prepared == [nil, 1])
        var calls = 0
        let thrown = await #expect(throws: AppleIDError.self) {
            try await Self.quick.run(pace: Self.pace(), preparing: { _ in 0 }) { _ async throws -> Int in
                calls += 1
                throw AppleIDError(.invalidToken, "revoked", httpStatus: 401)
            }
        }
        #expect(calls == 2 && thrown?.code == .invalidToken && thrown?.message.contains("right after refusing the one before") == true)
    }

    @Test("a call that succeeds after two transient failures returns its value from the third attempt")
    func succeedsAfterRetries() async throws {
        var calls = 0
        let value = try await Self.quick.run(pace: Self.pace()) { () async throws -> String in
            calls += 1
            if calls < 3 { throw Self.error(calls == 1 ? .rateLimited : .connection) }
            return "done"
        }
        #expect(value == "done" && calls == 3)
    }

    @Test("an error that is not an AppleIDError is not retried")
    func foreignErrorsPassThrough() async throws {
        struct Elsewhere: Error {}
        var calls = 0
        await #expect(throws: Elsewhere.self) {
            try await Self.quick.run(pace: Self.pace()) { () async throws -> Int in
                calls += 1
                throw Elsewhere()
            }
        }
        #expect(calls == 1)
    }

    @Test("one attempt in all: a transient error is thrown without a retry")
    func singleAttempt() async throws {
        var calls = 0
        let thrown = await #expect(throws: AppleIDError.self) {
            try await RetryPolicy(maximumAttempts: 1).run(pace: Self.pace()) { () async throws -> Int in
                calls += 1
                throw Self.error(.serverError)
            }
        }
        #expect(calls == 1 && thrown?.attempts == 1)
    }
}
