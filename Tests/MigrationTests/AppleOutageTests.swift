import AppleID
import Foundation
import Ledger
import Synchronization
import TestSupport
import Testing

@testable import AppleSimulator
@testable import Migration

/// A run against Apple as it really behaves: outages waited out with one shared pace, a
/// `Retry-After` honoured by every worker, a list stopped when nearly every call is refused the
/// same way. The stand-in is real HTTP on loopback; outages last seconds. Each test asserts
/// what was lost and what was called, never how long it took.
@Suite("Apple's outages and refusals")
struct AppleOutageTests {
    let dir = TemporaryDirectory()

    /// What a run says once, and its progress lines, as a terminal would show them.
    final class Heard: Sendable {
        private let said = Mutex<(notices: [String], lines: [String])>(([], []))
        func notice(_ text: String) { said.withLock { $0.notices.append(text) } }
        func line(_ text: String) { said.withLock { $0.lines.append(text) } }
        var notices: [String] { said.withLock { $0.notices } }
        var lines: [String] { said.withLock { $0.lines } }
    }

    private func listening(_ job: inout MigrationJob, _ heard: Heard) {
        job.options.onNotice = { heard.notice($0) }
        job.options.onProgress = { heard.line($0) }
    }

    @Test(
        "every call refused with invalid_request: the breaker stops generate over 2,000 users after at most 250 calls, exit 3, naming the class and the likely causes"
    )
    func breakerStopsABurnedList() async throws {
        let fixture = try await AppleFixture.start(rules: AppleFixture.revoking(1), in: dir)
        let a = try await fixture.ledger(.sender)
        var job = fixture.job(
            .generate(target: AppleFixture.recipientTeam), ledger: a, input: try fixture.usersFile(2_000), output: fixture.path + "/out.csv")
        job.options.concurrency = 16
        let summary = try await job.execute(logger: fixture.logger)
        let calls = fixture.simulator.server.stats.snapshot["usermigrationinfo.invalid_request"] ?? 0
        #expect(summary.exitStatus == .credentialsRefused && summary.stopReason == .breaker, "\(summary.text)")
        #expect(calls >= 200 && calls <= 250, "\(calls) calls made")
        // Each call answered was recorded as its user's failure, but those still in flight when
        // the breaker stopped the run (at most one per worker; on a busy machine some are):
        // abandoned, left for the next run with everyone not attempted. Nobody else was touched.
        #expect(try AppleFixture.events(.transferIDGenerationFailed, in: a).count == summary.failed)
        #expect(
            summary.failed <= calls && calls <= summary.failed + job.options.concurrency,
            "\(summary.failed) failures recorded, \(calls) calls answered")
        #expect(summary.succeeded == 0 && summary.failed + summary.abandoned + summary.notAttempted == 2_000)
        let message = summary.stoppedBy?.message ?? ""
        #expect(message.contains("invalid_request") && message.contains("--target") && message.contains("revoked"), "\(message)")
        let finished = try AppleFixture.events(.runFinished, in: a)
        guard case .runFinished(let body)? = finished.last?.body else {
            Issue.record("no run finished")
            return
        }
        #expect(body.stopReason == .breaker && body.exitStatus == 3 && body.stoppedBy?.kind == .invalidRequest)
        await fixture.simulator.stop()
    }

    @Test("a third of the users revoked: the breaker stays quiet, the run finishes with exactly those users failed")
    func breakerSparesAnOrdinaryList() async throws {
        let fixture = try await AppleFixture.start(rules: AppleFixture.revoking(1.0 / 3), in: dir)
        let a = try await fixture.ledger(.sender)
        var job = fixture.job(
            .generate(target: AppleFixture.recipientTeam), ledger: a, input: try fixture.usersFile(2_000), output: fixture.path + "/out.csv")
        job.options.concurrency = 16
        let summary = try await job.execute(logger: fixture.logger)
        let apple = try SimulatedApple(directory: fixture.apple, rules: AppleFixture.revoking(1.0 / 3))
        let revoked = Set((0..<2_000).map(AppleFixture.sub).filter(apple.hasRevoked))
        let failed = Set(try AppleFixture.events(.transferIDGenerationFailed, in: a).compactMap(\.identifiers.senderSub))
        #expect(summary.stoppedBy == nil && summary.exitStatus == .failed, "\(summary.text)")
        #expect(revoked.count > 500 && failed == revoked && summary.succeeded == 2_000 - revoked.count)
        await fixture.simulator.stop()
    }

    @Test(
        "503 with Retry-After, then 429 with Retry-After, then 503 without, each mid-run at concurrency 16: every user done, none failed; no call sooner than Retry-After beyond those in flight; the outage without it meets a few probes; the run says it waits"
    )
    func outagesLoseNobody() async throws {
        var faults = FaultInjection()
        faults.outages = [
            SimulatedOutage(afterCalls: 150, lasting: .seconds(2), answer: .status(503), retryAfter: 1),
            SimulatedOutage(afterCalls: 300, lasting: .seconds(2), answer: .status(429), retryAfter: 1),
            SimulatedOutage(afterCalls: 450, lasting: .seconds(3), answer: .status(503)),
        ]
        let fixture = try await AppleFixture.start(faults: faults, in: dir)
        let a = try await fixture.ledger(.sender)
        let heard = Heard()
        var job = fixture.job(
            .generate(target: AppleFixture.recipientTeam), ledger: a, input: try fixture.usersFile(600), output: fixture.path + "/out.csv")
        job.options.concurrency = 16
        listening(&job, heard)
        let summary = try await job.execute(logger: fixture.logger)
        #expect(summary.succeeded == 600 && summary.failed == 0 && summary.exitStatus == .success, "\(summary.text)")
        #expect(try AppleFixture.events(.transferIDGenerationFailed, in: a).isEmpty)

        let calls = fixture.simulator.server.outages.calls
        for outage in 0..<3 { #expect(calls.contains { $0.outage == outage }, "outage \(outage) was never met") }
        for outage in 0..<2 {
            // Only the calls already on their way when the outage began (one a worker) arrive
            // before the Retry-After it asked for has passed.
            let early = calls.filter { $0.outage == outage && $0.at < $0.outageBegan + .seconds(1) }
            #expect(early.count <= 16, "outage \(outage): \(early.count) calls within its Retry-After")
        }
        let withoutRetryAfter = calls.filter { $0.outage == 2 }.count
        // 16 in flight, at most one more each before three failures in a row make Apple
        // unavailable, then probes 0.25 s, 0.5 s, 1 s, 2 s apart.
        #expect(withoutRetryAfter <= 2 * 16 + 6, "\(withoutRetryAfter) calls during the outage without Retry-After")

        // What the auditor sees: every refused call counted, the pauses recorded. A busy machine
        // may add calls that went unanswered in time (they count too), never fewer.
        guard case .runFinished(let body)? = try AppleFixture.events(.runFinished, in: a).last?.body, let unavailable = body.appleUnavailable else {
            Issue.record("run finished records no pause")
            return
        }
        #expect(
            unavailable.callsRefused >= calls.count && unavailable.pauses >= 3 && unavailable.pausedMilliseconds > 0,
            "\(unavailable) for \(calls.count) calls")
        let notices = heard.notices
        #expect(notices.filter { $0.hasPrefix("Apple unavailable") }.count == unavailable.pauses, "\(notices)")
        #expect(notices.filter { $0.hasPrefix("Apple answers again") }.count == unavailable.pauses, "\(notices)")
        #expect(notices.contains { $0.contains("HTTP 429") } && notices.contains { $0.contains("HTTP 503") }, "\(notices)")
        await fixture.simulator.stop()
    }

    @Test(
        "nothing listening at Apple's address: the first notice names the address and the refusal, the progress line keeps saying so, nobody fails, and past the outage limit the run stops resumably, exit 1"
    )
    func nothingListening() async throws {
        let fixture = try await AppleFixture.start(in: dir)
        let a = try await fixture.ledger(.sender)
        let closed = "http://127.0.0.1:\(try unusedLoopbackPort())"
        let heard = Heard()
        var job = fixture.job(
            .generate(target: AppleFixture.recipientTeam), ledger: a, input: try fixture.usersFile(50), output: fixture.path + "/out.csv")
        job.endpoints = AppleEndpoints(baseURL: closed)
        job.options.pace.outageLimit = .seconds(2)
        listening(&job, heard)
        let summary = try await job.execute(logger: fixture.logger)
        #expect(summary.exitStatus == .failed && summary.stopReason == .outage, "\(summary.text)")
        #expect(summary.failed == 0 && summary.succeeded == 0 && summary.notAttempted == 50)
        #expect(try AppleFixture.events(.transferIDGenerationFailed, in: a).isEmpty)
        let first = heard.notices.first ?? ""
        #expect(first.hasPrefix("Apple unavailable") && first.contains("127.0.0.1") && first.lowercased().contains("refused"), "\(heard.notices)")
        #expect(heard.lines.contains { $0.contains("Apple unavailable for") && $0.contains("waiting") }, "\(heard.lines)")
        #expect(summary.stoppedBy?.message.contains("--outage-limit") == true, "\(summary.text)")

        // The next run, Apple back, does everyone.
        let again = try await fixture.job(
            .generate(target: AppleFixture.recipientTeam), ledger: a, input: fixture.path + "/users.csv", output: fixture.path + "/out.csv"
        )
        .execute(logger: fixture.logger)
        #expect(again.succeeded == 50 && again.exitStatus == .success, "\(again.text)")
        await fixture.simulator.stop()
    }

    @Test("a Retry-After beyond --max-retry-after stops the run at once, resumably (exit 1), with no user failed")
    func retryAfterBeyondTheCeiling() async throws {
        var faults = FaultInjection()
        faults.outages = [SimulatedOutage(afterCalls: 20, lasting: .seconds(60), answer: .status(503), retryAfter: 3_600)]
        let fixture = try await AppleFixture.start(faults: faults, in: dir)
        let a = try await fixture.ledger(.sender)
        let summary = try await fixture.job(
            .generate(target: AppleFixture.recipientTeam), ledger: a, input: try fixture.usersFile(200), output: fixture.path + "/out.csv"
        )
        .execute(logger: fixture.logger)
        #expect(summary.exitStatus == .failed && summary.stopReason == .retryAfter && summary.failed == 0, "\(summary.text)")
        #expect(summary.stoppedBy?.message.contains("--max-retry-after") == true)
        #expect(fixture.simulator.server.outages.calls.count <= 16, "calls after the stop")
        await fixture.simulator.stop()
    }
}
