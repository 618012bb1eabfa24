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
    static let notifications = 20_000
    static let connections = 32
    static let exchangeUsers = 4_000

    @Test("20,000 notifications over 32 connections during an exchange: each acknowledged one recorded once, the exchange complete, the chain intact")
    func loadBesideExchange() async throws {
        let dir = TemporaryDirectory()
        let apple = dir.sub("apple")
        try SimulatorProcess.registerTeam("AAAA111111", keyID: "KEYA111111", in: apple)
        try SimulatorProcess.registerTeam("BBBB222222", keyID: "KEYB222222", in: apple)
        let stand_in = try SimulatorProcess.start(directory: apple, extra: ["--latency-ms", "5"])
        defer { stand_in.stop() }
        let a = dir.sub("a"), b = dir.sub("b")
        for (path, team, role) in [(a, "AAAA111111", "sender"), (b, "BBBB222222", "recipient")] {
            #expect(try runProduct("handover", ["init", "--ledger", path, "--team-id", team, "--client-id", "com.example.app", "--role", role]).status == 0)
        }
        func credentials(_ team: String, _ key: String) -> [String] {
            ["--team-id", team, "--client-id", "com.example.app", "--key-id", key, "--private-key", apple + "/keys/AuthKey_\(key).p8", "--apple-base-url", stand_in.baseURL]
        }
        let users = dir.sub("users.csv"), handoff = dir.sub("handoff.csv"), output = dir.sub("exchanged.csv")
        try Data(("sub,account_id\n" + (0..<NotificationLoadTests.exchangeUsers).map { "000\($0 % 900).\(String(format: "%08x", $0)).0001,acct-\($0)\n" }.joined()).utf8)
            .write(to: URL(fileURLWithPath: users))
        let generated = try runProduct("handover", ["generate", "--ledger", a, "--users", users, "--target", "BBBB222222", "--out", handoff, "--concurrency", "32"] + credentials("AAAA111111", "KEYA111111"))
        try #require(generated.status == 0, "\(generated.err)")

        // Notifications signed by the stand-in's key, as Apple would send them; every tenth is delivered twice.
        let minter = try TokenMinter(key: try SimulatorDirectory(path: apple).signingKey())
        let now = Int64(Date().timeIntervalSince1970)
        let types = ["email-disabled", "email-enabled", "consent-revoked", "account-deleted"]
        let bodies: [(jti: String, body: String)] = try await withThrowingTaskGroup(of: [(String, String)].self) { group in
            let share = NotificationLoadTests.notifications / 2
            for half in 0..<2 {
                group.addTask {
                    try (half * share..<(half + 1) * share).map { i in
                        let jti = "load-\(i)"
                        return (jti, try minter.notification(audience: "com.example.app", type: types[i % 4], sub: "B.\(i % 5_000)", eventTime: now, jti: jti))
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }

        let serve = try ServerProcess(["serve", "--ledger", b, "--port", "0", "--jwks-url", stand_in.baseURL + "/auth/keys"])
        let exchange = Process()
        exchange.executableURL = URL(fileURLWithPath: productPath("handover"))
        exchange.arguments = ["exchange", "--ledger", b, "--transfers", handoff, "--out", output, "--concurrency", "4"] + credentials("BBBB222222", "KEYB222222")
        exchange.standardOutput = FileHandle.nullDevice
        exchange.standardError = FileHandle.nullDevice
        try exchange.run()

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: NotificationLoadTests.connections)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let url = serve.baseURL + "/apple/notifications"
        let acknowledged: [String] = try await withThrowingTaskGroup(of: [String].self) { group in
            for worker in 0..<NotificationLoadTests.connections {
                group.addTask {
                    var acked: [String] = []
                    for i in stride(from: worker, to: bodies.count, by: NotificationLoadTests.connections) {
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
        try await http.shutdown()
        exchange.waitUntilExit()
        #expect(exchange.terminationStatus == 0)
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
}
