import AppleID
import AsyncHTTPClient
import Basics
import Foundation
import Intake
import Ledger
import NotificationServer
import Projections
import TestSupport
import Testing

@Suite("serve's /metrics")
struct MetricsTests {
    /// Every series family docs/serve.md documents.
    static let documented = [
        "handover_events_recorded_total", "handover_rejections_total", "handover_rejections_suppressed_total",
        "handover_deliveries_duplicate_total", "handover_users_erased_total", "handover_http_responses_total",
        "handover_append_seconds", "handover_users", "handover_ledger_disk_free_bytes", "handover_window_left_seconds",
        "handover_window_closes_timestamp_seconds",
    ]

    @Test(
        "promtool check metrics finds no problem in /metrics after notifications of every kind, a sign-in report, refusals and a flood; every series has help text"
    )
    func promtoolFindsNoProblem() async throws {
        guard let promtool = MetricsTests.promtool else {
            Issue.record("promtool is not installed: run tools/setup --prometheus (Debian's prometheus package)")
            return
        }
        let f = try await IntakeFixture()
        try await WindowRecorder(ledger: f.ledger, projection: f.intake.projection).record(acceptedAt: .now().adding(days: -50), correcting: false)
        let configuration = try ServeConfiguration(
            port: 0, signInSecret: try BearerSecret(secret: ServerTests.secret, for: .signIn), rejectionBudget: 2)
        let server = try await RunningHandoverServer(HandoverServer(intake: f.intake, configuration: configuration, logger: IntakeFixture.quiet))
        let metrics: String
        do {
            metrics = try await withHTTPClient { http in try await exercise(f, server, http) }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()

        let file = f.dir.sub("metrics.txt")
        try Data(metrics.utf8).write(to: URL(fileURLWithPath: file))
        let checked = try await MetricsTests.check(file, with: promtool)
        #expect(
            checked.status == 0 && checked.out.isEmpty && checked.err.isEmpty,
            "promtool check metrics exited \(checked.status):\n\(checked.out)\(checked.err)\n/metrics was:\n\(metrics)")

        let lines = metrics.split(separator: "\n")
        let helped = Set(lines.filter { $0.hasPrefix("# HELP ") }.compactMap { $0.split(separator: " ").dropFirst(2).first.map(String.init) })
        let histograms = Set(
            lines.filter { $0.hasPrefix("# TYPE ") && $0.hasSuffix(" histogram") }.compactMap {
                $0.split(separator: " ").dropFirst(2).first.map(String.init)
            })
        let names = Set(lines.filter { !$0.hasPrefix("#") }.map { String($0.prefix { $0 != "{" && $0 != " " }) })
        let families = Set(
            names.map { name in
                histograms.first { family in ["_bucket", "_sum", "_count"].contains { name == family + $0 } } ?? name
            })
        #expect(families.subtracting(helped).isEmpty, "series without a # HELP line: \(families.subtracting(helped).sorted())")
        #expect(
            Set(MetricsTests.documented).subtracting(families).isEmpty,
            "documented series missing: \(Set(MetricsTests.documented).subtracting(families).sorted())")
        for type in [EventType.notificationReceived, .notificationRejected, .signInVerified, .signInRejected, .rejectionsSummarized] {
            #expect(!metrics.contains("handover_events_recorded_total{type=\"\(type.rawValue)\"} 0\n"), "no \(type.rawValue) counted:\n\(metrics)")
        }
        for route in ["notifications", "sign-ins"] {
            #expect(!metrics.contains("handover_rejections_suppressed_total{route=\"\(route)\"} 0\n"), "no suppressed \(route) counted:\n\(metrics)")
        }
        #expect(metrics.contains("handover_users_erased_total 1\n"), "\(metrics)")
        // The deadline in view: 10 days left, the users as the ledger holds them.
        let left = metrics.split(separator: "\n").first { $0.hasPrefix("handover_window_left_seconds ") }.flatMap {
            Double($0.split(separator: " ")[1])
        }
        #expect(left.map { (9 * 86_400...10 * 86_400).contains($0) } == true, "\(metrics)")
        for state in ["migrated", "pending", "failed", "unmatched", "transfer-id-generated"] {
            #expect(metrics.contains("handover_users{state=\"\(state)\"}"), "\(state) missing:\n\(metrics)")
        }
        #expect(metrics.contains("handover_http_responses_total{route=\"sign-ins\",status=\"401\"} 1\n"), "\(metrics)")
    }

    /// Sends what makes every series count: a notification of each kind (one redelivered, the
    /// account-deleted one erasing its user), a sign-in report, one refused for its bearer
    /// secret, `/healthz`, forged deliveries to both routes beyond the budget of 2, the
    /// summaries recorded; returns `/metrics`. Expectations only: the caller shuts down.
    private func exercise(_ f: IntakeFixture, _ server: RunningHandoverServer, _ http: HTTPClient) async throws -> String {
        let notifications = server.baseURL + "/apple/notifications"
        let signIns = server.baseURL + "/apple/sign-ins"
        let bearer = [("Authorization", "Bearer " + ServerTests.secret)]
        for type in AppleNotification.EventType.allCases {
            let body = IntakeFixture.body(
                try IntakeFixture.signed(try f.notificationClaims(type: type.rawValue, sub: "B.metrics", jti: "metrics-\(type.rawValue)")))
            #expect(try await http.send(notifications, body: body).status == 200, "\(type.rawValue)")
            if type == .emailEnabled { #expect(try await http.send(notifications, body: body).status == 200, "redelivered") }
        }
        let identity = try IntakeFixture.signed(f.identityClaims(sub: "B.metrics.sign-in"))
        #expect(try await http.send(signIns, body: MetricsTests.signInBody(identity), headers: bearer).status == 200)
        #expect(
            try await http.send(signIns, body: MetricsTests.signInBody(identity), headers: [("Authorization", "Bearer not-the-secret-at-all")]).status
                == 401)
        #expect(try await http.send(server.baseURL + "/healthz", method: .GET).status == 200)

        // Forged: Apple's kid, a signature that is not Apple's. The first refusals of each
        // route are recorded (400); the rest are over the budget (429), even if a minute ends
        // meanwhile and two more are recorded.
        let forgedSignIn = { (i: Int) in
            MetricsTests.signInBody(
                try IntakeFixture.token(
                    header: ["alg": "RS256", "kid": TestKeys.minter.keyID],
                    claims: f.identityClaims(sub: "B.forged.\(i)"), key: TestKeys.stranger))
        }
        let forgedNotification = { (i: Int) in
            IntakeFixture.body(
                try IntakeFixture.token(
                    header: ["alg": "RS256", "kid": TestKeys.minter.keyID],
                    claims: try f.notificationClaims(type: "account-deleted", sub: "B.victim", jti: "forged-\(i)"), key: TestKeys.stranger))
        }
        #expect(try await http.send(signIns, body: try forgedSignIn(0), headers: bearer).status == 400)
        #expect(try await http.send(notifications, body: try forgedNotification(0)).status == 400)
        var statuses: [String: [Int]] = [:]
        for i in 1...6 {
            statuses["notifications", default: []].append(try await http.send(notifications, body: try forgedNotification(i)).status)
            statuses["sign-ins", default: []].append(try await http.send(signIns, body: try forgedSignIn(i), headers: bearer).status)
        }
        for (route, answered) in statuses {
            #expect(answered.contains(429) && answered.allSatisfy { $0 == 400 || $0 == 429 }, "\(route): \(answered)")
        }
        // Recorded now, or already by serve's own minute-by-minute recording when a minute ended
        // during the flood (a slow machine): either way the ledger holds at least one summary.
        try await server.server.recordSummaries(all: true)
        #expect(try f.ledger.read { try $0.sequences(of: .rejectionsSummarized).count } >= 1)
        let metrics = try await http.send(server.baseURL + "/metrics", method: .GET)
        #expect(metrics.status == 200)
        return metrics.body
    }

    /// A sign-in report's body with `token` (base64url and dots: nothing to escape).
    static func signInBody(_ token: String) -> Data {
        Data("{\"identity_token\": \"\(token)\"}".utf8)
    }

    /// `promtool` on the `PATH` (or in /usr/bin, where Debian's prometheus package puts it).
    static var promtool: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return (path.split(separator: ":").map(String.init) + ["/usr/bin"])
            .map { $0 + "/promtool" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// `promtool check metrics < file`, waited for on a thread of its own (not one of the few
    /// the servers of tests running alongside need).
    static func check(_ file: String, with promtool: String) async throws -> (status: Int32, out: String, err: String) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try runCommand("/bin/sh", ["-c", "exec \"$0\" check metrics < \"$1\"", promtool, file]) })
            }
        }
    }
}
