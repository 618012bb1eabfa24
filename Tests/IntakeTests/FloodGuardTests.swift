import AsyncHTTPClient
import Basics
import Foundation
import Intake
import Ledger
import NotificationServer
import TestSupport
import Testing

@Suite("serve's flood guard")
struct FloodGuardTests {
    @Test(
        "10,000 distinct forgeries from one address grow the ledger by at most the budget and one summary a minute, while 1,000 valid notifications from another address are all recorded"
    )
    func flood() async throws {
        let f = try await IntakeFixture()
        let server = try await RunningHandoverServer(
            HandoverServer(
                intake: f.intake, configuration: ServeConfiguration(port: 0, trustedProxy: "127.0.0.1"),
                logger: IntakeFixture.quiet))
        let url = server.baseURL + "/apple/notifications"
        let forgeries = 10_000
        let valid = 1_000
        // Forged: Apple's kid, a signature that is not Apple's; every one distinct.
        let forged = try (0..<forgeries).map { i in
            IntakeFixture.body(
                try IntakeFixture.token(
                    header: ["alg": "RS256", "kid": TestKeys.minter.keyID],
                    claims: try f.notificationClaims(type: "account-deleted", sub: "B.victim", jti: "forged-\(i)"),
                    signature: Data(repeating: UInt8(i % 251), count: 256)))
        }
        let genuine = try (0..<valid).map { i in
            IntakeFixture.body(try IntakeFixture.signed(try f.notificationClaims(type: "email-enabled", sub: "B.real.\(i)", jti: "real-\(i)")))
        }
        let started = Timestamp.now()
        // One connection per lane (32), and a connect deadline far above a busy machine's
        // delays: no request waits in the client's pool long enough to be failed there.
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 32)
        configuration.timeout = .init(connect: .seconds(120), read: .seconds(120))
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let floodStatuses: [Int]
        let answers: [(status: Int, seconds: Double)]
        let metrics: String
        do {
            async let flood: [Int] = withThrowingTaskGroup(of: [Int].self) { group in
                for lane in 0..<16 {
                    group.addTask {
                        try await stride(from: lane, to: forgeries, by: 16).asyncMap { i in
                            try await http.send(url, body: forged[i], headers: [("X-Forwarded-For", "198.51.100.1, 203.0.113.7")]).status
                        }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            answers = try await withThrowingTaskGroup(of: [(Int, Double)].self) { group in
                for lane in 0..<16 {
                    group.addTask {
                        try await stride(from: lane, to: valid, by: 16).asyncMap { i in
                            let sent = ContinuousClock.now
                            let status = try await http.send(url, body: genuine[i], headers: [("X-Forwarded-For", "17.58.0.9")]).status
                            return (status, (ContinuousClock.now - sent).inSeconds)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            floodStatuses = try await flood
            metrics = try await http.send(server.baseURL + "/metrics", method: .GET).body
        } catch {
            try? await http.shutdown()
            await server.stop()
            throw error
        }
        try await http.shutdown()
        await server.stop()
        let ended = Timestamp.now()
        let minutes = Int(ended.seconds / 60 - started.seconds / 60) + 1

        #expect(answers.allSatisfy { $0.status == 200 }, "every valid notification acknowledged: \(Set(answers.map(\.status)))")
        #expect(try f.events(.notificationReceived).count == valid)
        let rejected = try f.events(.notificationRejected)
        let summaries = try f.events(.rejectionsSummarized)
        #expect(rejected.count <= 60 * minutes, "\(rejected.count) refusals recorded over \(minutes) minute(s)")
        #expect(summaries.count <= minutes, "\(summaries.count) summaries over \(minutes) minute(s)")
        let summarized = summaries.reduce(0) { total, event in
            guard case .rejectionsSummarized(let body) = event.body else { return total }
            #expect(body.source == "203.0.113.7")
            return total + body.total
        }
        #expect(rejected.count + summarized == forgeries, "every forgery is recorded or summed up: \(rejected.count) + \(summarized)")
        #expect(floodStatuses.filter { $0 == 400 }.count == rejected.count)
        #expect(floodStatuses.filter { $0 == 429 }.count == summarized)
        #expect(metrics.contains("handover_rejections_suppressed_total{route=\"notifications\"} \(summarized)\n"), "\(metrics)")
        #expect(try f.ledger.verify().isIntact)
        let latencies = answers.map(\.seconds).sorted()
        print(
            String(
                format: "flood guard: %d forgeries (%d recorded, %d summed up in %d events), %d valid notifications p50 %.1f ms p99 %.1f ms",
                forgeries, rejected.count, summarized, summaries.count, valid, latencies[latencies.count / 2] * 1000,
                latencies[latencies.count * 99 / 100] * 1000))
    }

    @Test("X-Forwarded-For counts only from the trusted proxy: without one, the source is the connection's peer")
    func forwardedForIgnoredWithoutTrustedProxy() async throws {
        let f = try await IntakeFixture()
        let server = try await RunningHandoverServer(
            HandoverServer(intake: f.intake, configuration: ServeConfiguration(port: 0, rejectionBudget: 0), logger: IntakeFixture.quiet))
        try await withHTTPClient { http in
            for i in 0..<2 {
                let answer = try await http.send(
                    server.baseURL + "/apple/notifications", body: Data("{\"payload\": \"not.a.jws\(i)\"}".utf8),
                    headers: [("X-Forwarded-For", "203.0.113.7")])
                #expect(answer.status == 429 && answer.json["error"] as? String == "too_many_rejections", "\(answer.body)")
            }
        }
        await server.stop()
        let summaries = try f.events(.rejectionsSummarized).compactMap { event -> RejectionsSummarized? in
            if case .rejectionsSummarized(let body) = event.body { return body }
            return nil
        }
        // The two may fall either side of a minute's end on a slow machine: one summary or two.
        #expect(!summaries.isEmpty && summaries.allSatisfy { $0.source == "127.0.0.1" } && summaries.map(\.total).reduce(0, +) == 2, "\(summaries)")
        #expect(try f.events(.notificationRejected).isEmpty)
    }

    @Test("the budget is per source and minute; a summary per source for each minute that ended, and for the current one when stopping")
    func budgetPerSourceAndMinute() {
        let guardian = FloodGuard(budgetPerMinute: 2)
        let minute = Timestamp(seconds: 1_800_000_000 / 60 * 60)
        let at = { (s: Int64) in Timestamp(seconds: minute.seconds + s) }
        #expect(guardian.admit(source: "a", route: "notifications", payloadSHA256: "h1", at: at(1)))
        #expect(guardian.admit(source: "a", route: "notifications", payloadSHA256: "h2", at: at(2)))
        #expect(!guardian.admit(source: "a", route: "notifications", payloadSHA256: "h3", at: at(3)))
        #expect(!guardian.admit(source: "a", route: "sign-ins", payloadSHA256: "h4", at: at(4)))
        #expect(guardian.admit(source: "b", route: "notifications", payloadSHA256: "h5", at: at(5)), "another source has its own budget")
        #expect(guardian.takeSummaries(at: at(30)).isEmpty, "the minute has not ended")
        #expect(guardian.admit(source: "a", route: "notifications", payloadSHA256: "h6", at: at(61)), "a new minute, a new budget")
        let summaries = guardian.takeSummaries(at: at(62))
        #expect(summaries.count == 1)
        #expect(
            summaries.first.map { ($0.source, $0.counts, $0.firstPayloadSHA256, $0.lastPayloadSHA256, $0.from, $0.until) } ?? (
                "", [:], "", "", minute, minute
            )
                == ("a", ["notifications": 1, "sign-ins": 1], "h3", "h4", minute, at(60)))
        #expect(guardian.admit(source: "a", route: "notifications", payloadSHA256: "h7", at: at(63)))
        #expect(!guardian.admit(source: "a", route: "notifications", payloadSHA256: "h8", at: at(64)))
        let last = guardian.takeSummaries(at: at(65), all: true)
        #expect(last.map(\.until) == [at(65)] && last.map(\.total) == [1], "stopping cuts the current minute at now")
    }
}

extension Sequence where Element: Sendable {
    /// `map` with an async transform, one element at a time.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
