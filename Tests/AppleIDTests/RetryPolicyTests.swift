import Foundation
import Testing
@testable import AppleID

/// ``RetryPolicy``: exponential backoff with equal jitter, as its documentation says, and which
/// errors it retries how often. No network: the calls are closures, the waits a millisecond.
@Suite("retry policy")
struct RetryPolicyTests {
    /// An error of `code`, as an attempt throws it.
    static func error(_ code: AppleIDError.Code, retryAfter: Double? = nil) -> AppleIDError {
        AppleIDError(code, "test \(code.rawValue)", httpStatus: 503, retryAfter: retryAfter)
    }

    static let transient: [AppleIDError.Code] = [.rateLimited, .serverError, .timeout, .connection]
    static let final: [AppleIDError.Code] = [.invalidRequest, .invalidClient, .invalidGrant, .invalidToken, .invalidResponse, .invalidConfiguration, .other]

    /// A policy whose waits are about a millisecond.
    static let quick = RetryPolicy(maximumAttempts: 4, baseDelay: 0.001, maximumDelay: 0.002)

    @Test("each wait lies in [c/2, c], c = min(maximumDelay, baseDelay × 2^(attempt−1)), and the draws cover that interval (equal jitter, not full)")
    func delaysLieInTheDocumentedInterval() {
        let policy = RetryPolicy()
        for attempt in 1...12 {
            let ceiling = min(policy.maximumDelay, policy.baseDelay * pow(2, Double(attempt - 1)))
            let draws = (0..<2_000).map { _ in policy.delay(after: attempt, error: Self.error(.serverError)) }
            let low = draws.min() ?? -1, high = draws.max() ?? -1
            #expect(low >= ceiling / 2 && high <= ceiling, "attempt \(attempt): draws in [\(low), \(high)], documented [\(ceiling / 2), \(ceiling)]")
            // 2,000 uniform draws all missing the interval's lowest or highest tenth: about 1 in 10^91.
            #expect(low < ceiling / 2 + ceiling / 20 && high > ceiling - ceiling / 20, "attempt \(attempt): draws in [\(low), \(high)] do not cover [\(ceiling / 2), \(ceiling)]")
        }
    }

    @Test("the defaults: 6 attempts, waits of 0.125–0.25 s doubling to 2–4 s, 30 s at most however late the attempt")
    func defaultsAndCap() {
        let policy = RetryPolicy()
        #expect(policy.maximumAttempts == 6 && policy.baseDelay == 0.25 && policy.maximumDelay == 30)
        let first = policy.delay(after: 1, error: Self.error(.timeout)), fifth = policy.delay(after: 5, error: Self.error(.timeout))
        #expect((0.125...0.25).contains(first) && (2...4).contains(fifth), "\(first) \(fifth)")
        for attempt in [9, 10, 20, 64, 2_000] {
            let wait = policy.delay(after: attempt, error: Self.error(.timeout))
            #expect((15...30).contains(wait), "attempt \(attempt): \(wait)")
        }
        #expect(RetryPolicy(maximumAttempts: 0).maximumAttempts == 1, "at least the first attempt")
    }

    @Test("Retry-After raises the wait, never above maximumDelay; a shorter one leaves the draw")
    func retryAfter() {
        let policy = RetryPolicy()
        for _ in 0..<200 {
            #expect(policy.delay(after: 1, error: Self.error(.rateLimited, retryAfter: 7)) == 7)
            #expect(policy.delay(after: 1, error: Self.error(.rateLimited, retryAfter: 120)) == 30)
            let wait = policy.delay(after: 3, error: Self.error(.rateLimited, retryAfter: 0.01))
            #expect((0.5...1).contains(wait), "\(wait)")
        }
    }

    @Test("a transient error is retried until maximumAttempts, each retry heard once; the error thrown counts the attempts", arguments: transient)
    func transientRetriedToTheLimit(code: AppleIDError.Code) async throws {
        var calls = 0
        var heard: [Int] = []
        let thrown = await #expect(throws: AppleIDError.self) {
            try await Self.quick.run(onRetry: { error, attempt in
                #expect(error.code == code)
                heard.append(attempt)
            }) { () async throws -> Int in
                calls += 1
                throw Self.error(code)
            }
        }
        #expect(calls == 4 && heard == [1, 2, 3])
        #expect(thrown?.code == code && thrown?.attempts == 4, "\(String(describing: thrown))")
    }

    @Test("an error that is not transient is thrown at once, after one attempt", arguments: final)
    func finalNotRetried(code: AppleIDError.Code) async throws {
        var calls = 0
        var retries = 0
        let thrown = await #expect(throws: AppleIDError.self) {
            try await Self.quick.run(onRetry: { _, _ in retries += 1 }) { () async throws -> Int in
                calls += 1
                throw Self.error(code)
            }
        }
        #expect(calls == 1 && retries == 0 && thrown?.code == code && thrown?.attempts == 1)
    }

    @Test("a call that succeeds after two transient failures returns its value from the third attempt")
    func succeedsAfterRetries() async throws {
        var calls = 0
        let value = try await Self.quick.run { () async throws -> String in
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
            try await Self.quick.run { () async throws -> Int in
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
            try await RetryPolicy(maximumAttempts: 1).run { () async throws -> Int in
                calls += 1
                throw Self.error(.serverError)
            }
        }
        #expect(calls == 1 && thrown?.attempts == 1)
    }
}
