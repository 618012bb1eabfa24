import AppleSimulator
import AsyncHTTPClient
import Foundation
import Ledger
import NIOCore
import TestSupport
import Testing

/// `handover serve` under load while `handover exchange`, another process, writes to the
/// same ledger.
@Suite("serve under load beside an exchange", .serialized)
struct NotificationLoadTests {
    static let notifications = 8_000
    static let connections = 32
    static let exchangeUsers = 2_000

    @Test("8,000 notifications over 32 connections during an exchange: each acknowledged one recorded once, the exchange complete, the chain intact")
    func loadBesideExchange() async throws {
        let teams = try TwoTeamsOnTheCommandLine(users: NotificationLoadTests.exchangeUsers, latencyMilliseconds: 5)
        defer { teams.standIn.stop() }
        let apple = teams.apple
        let b = teams.recipient

        // Notifications signed by the stand-in's key, as Apple would send them; every tenth is delivered twice.
        let minter = try TokenMinter(key: try SimulatorDirectory(path: apple).signingKey())
        let now = Int64(Date().timeIntervalSince1970)
        let types = ["email-disabled", "email-enabled", "consent-revoked", "account-deleted"]
        let bodies: [(jti: String, body: String)] = try await withThrowingTaskGroup(of: [(String, String)].self) { group in
            let share = NotificationLoadTests.notifications / 2
            for half in 0..<2 {
                group.addTask {
                    var bodies: [(String, String)] = []
                    for i in half * share..<(half + 1) * share {
                        let jti = "load-\(i)"
                        bodies.append(
                            (
                                jti,
                                try await minter.notification(
                                    audience: "com.example.app", type: types[i % 4], sub: "B.\(i % 5_000)", eventTime: now, jti: jti)
                            ))
                    }
                    return bodies
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }

        let serve = try ServerProcess(["serve", "--ledger", b, "--port", "0", "--jwks-url", teams.standIn.baseURL + "/auth/keys"])

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: NotificationLoadTests.connections)
        let url = serve.baseURL + "/apple/notifications"
        // Half the notifications, then the exchange, then (once it has recorded a user) the other
        // half: the two writers' events interleave in the log however slow either process is.
        func send(_ range: Range<Int>, _ http: HTTPClient) async throws -> [String] {
            try await withThrowingTaskGroup(of: [String].self) { group in
                for worker in 0..<NotificationLoadTests.connections {
                    group.addTask {
                        var acked: [String] = []
                        for i in stride(from: range.lowerBound + worker, to: range.upperBound, by: NotificationLoadTests.connections) {
                            for _ in 0..<(i % 10 == 0 ? 2 : 1) {
                                var request = HTTPClientRequest(url: url)
                                request.method = .POST
                                request.body = .bytes(ByteBuffer(string: bodies[i].body))
                                let response = try await http.execute(request, timeout: .seconds(60))
                                _ = try await response.body.collect(upTo: 1 << 16)
                                if response.status == .ok { acked.append(bodies[i].jti) }
                            }
                        }
                        return acked
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
        }
        let half = bodies.count / 2
        let (acknowledged, exchange) = try await withHTTPClient(configuration: configuration) { http in
            var acked = try await send(0..<half, http)
            let exchange = try teams.startExchange(concurrency: 4)
            while try exchangedSoFar(b) == 0, exchange.isRunning { try await Task.sleep(for: .milliseconds(20)) }
            acked += try await send(half..<bodies.count, http)
            return (acked, exchange)
        }
        let exchangeRun = exchange.wait()
        #expect(exchangeRun.status == 0, "\(exchangeRun.err)")
        #expect(serve.stop() == 0, "serve exits 0 on SIGTERM")

        let distinctAcked = Set(acknowledged)
        #expect(distinctAcked.count == NotificationLoadTests.notifications)
        let ledger = try Ledger.open(at: b)
        defer { ledger.close() }
        let (received, exchanged) = try ledger.read { view in
            (try view.sequences(of: .notificationReceived).compactMap { try view.event($0) }, try view.sequences(of: .transferIDExchanged))
        }
        let jtis = received.compactMap(\.identifiers.jti)
        #expect(jtis.count == NotificationLoadTests.notifications)
        #expect(Set(jtis) == distinctAcked)
        #expect(exchanged.count == NotificationLoadTests.exchangeUsers)
        // The two writers really overlapped: their events interleave in the log.
        let notificationRange = (received.first?.sequence ?? 0)...(received.last?.sequence ?? 0)
        #expect(exchanged.contains { notificationRange.contains($0) }, "the exchange ran while notifications arrived")
        #expect(try ledger.verify().isIntact)
        let verify = try runProduct("handover", ["verify", "--ledger", b])
        #expect(verify.status == 0, "\(verify.err)")
    }

    /// The users the exchange has recorded so far in `ledger`, read from a read-only open
    /// beside the two processes writing it.
    private func exchangedSoFar(_ ledger: String) throws -> Int {
        let view = try Ledger.open(at: ledger, options: .init(access: .readOnly))
        defer { view.close() }
        return try view.read { try $0.sequences(of: .transferIDExchanged).count }
    }
}
