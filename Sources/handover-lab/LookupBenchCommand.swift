import AppleID
import AppleSimulator
import ArgumentParser
import AsyncHTTPClient
import CryptoExtras
import Foundation
import Intake
import Ledger
import Logging
import NIOCore
import NotificationServer
import Projections
import Synchronization

/// `handover-lab bench-lookups`: the app backend's `GET /v1/transfer-subs/{id}` through
/// `handover serve` on team B's ledger, while Apple's notifications arrive at a steady rate,
/// against bare `GET /healthz` round trips on the same connections in the same run.
struct LookupBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench-lookups", abstract: "Measure lookups through handover serve beside a steady stream of notifications.")

    @Option(help: "Team B's ledger, holding received packages (it is written to: notifications are recorded).") var ledger: String
    @Option(help: "Lookups to make.") var lookups = 50_000
    @Option(help: "Concurrent lookup connections.") var connections = 16
    @Option(name: .customLong("notifications-per-second"), help: "Notifications posted meanwhile, per second.") var notificationRate = 500

    func run() async throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        let projection = UserProjection()
        let opened = try Ledger.open(at: ledger, folders: [projection])
        defer { opened.close() }
        // The transfer_subs to look up: every row received, taken from the log, in a scrambled order.
        let transferSubs: [String] = try opened.read { view in
            var subs: [String] = []
            for sequence in try view.sequences(of: .handoffRowsReceived) {
                guard case .handoffRowsReceived(let rows)? = try view.event(sequence)?.body else { continue }
                subs += rows.transferSubs
                if subs.count >= lookups { break }
            }
            return subs.shuffled()
        }
        guard !transferSubs.isEmpty else { throw ValidationError("\(ledger) holds no received package") }
        let minter = try TokenMinter(key: _RSA.Signing.PrivateKey(keySize: .bits2048))
        let clientID = try opened.identity().clientIDs[0]
        let now = Int64(Date().timeIntervalSince1970)
        let secret = "bench-lookup-secret"
        let keys = AppleKeySet(.fixed(try JSONWebKeySet(json: Data(minter.jwks().utf8))))
        let server = try await RunningHandoverServer(HandoverServer(intake: AppleIntake(ledger: opened, projection: projection, keys: keys, logger: logger),
                                                                    configuration: ServeConfiguration(port: 0, signInSecret: SignInSecret(secret: secret)), logger: logger))
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: connections + 8)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let base = server.baseURL
        @Sendable func get(_ path: String) async throws -> Bool {
            var request = HTTPClientRequest(url: base + path)
            request.headers.add(name: "Authorization", value: "Bearer \(secret)")
            let response = try await http.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 1 << 16)
            return response.status == .ok && (path == "/healthz" || body.readableBytesView.contains(UInt8(ascii: "\"")))
        }

        let health = try await measure(count: lookups, workers: connections) { _ in try await get("/healthz") }
        let alone = try await measure(count: lookups, workers: connections) { i in try await get("/v1/transfer-subs/" + transferSubs[i % transferSubs.count]) }
        // Beside a steady stream of notifications: `notificationRate` a second, each on its own schedule.
        let stop = Stopping()
        // Enough for the lookups beside them at half the rate they ran alone (minted first: RS256 signing costs CPU).
        let expected = Double(lookups) / max(alone.rate, 1) * 2 + 5
        let bodies = try (0..<Int(expected * Double(notificationRate))).map { i in
            try minter.notification(audience: clientID, type: i % 2 == 0 ? "email-disabled" : "email-enabled", sub: "bench-lookup.\(i)", eventTime: now, jti: "bench-lookup-\(UUID().uuidString)")
        }
        let stream = Task {
            let clock = ContinuousClock()
            let started = clock.now
            let interval = Duration.seconds(1) / notificationRate
            var sent = 0
            try await withThrowingTaskGroup(of: Void.self) { group in
                while !stop.isSet, sent < bodies.count {
                    try await clock.sleep(until: started + interval * sent)
                    let body = bodies[sent]
                    group.addTask {
                        var request = HTTPClientRequest(url: base + "/apple/notifications")
                        request.method = .POST
                        request.body = .bytes(ByteBuffer(string: body))
                        let response = try await http.execute(request, timeout: .seconds(60))
                        _ = try await response.body.collect(upTo: 1 << 16)
                    }
                    sent += 1
                }
                try await group.waitForAll()
            }
            return (sent, (clock.now - started).inSeconds)
        }
        let beside = try await measure(count: lookups, workers: connections) { i in try await get("/v1/transfer-subs/" + transferSubs[(i * 7 + 3) % transferSubs.count]) }
        stop.set()
        let (sent, seconds) = try await stream.value
        try await http.shutdown()
        await server.stop()

        print("Lookup benchmark: \(lookups) lookups of received users over \(connections) loopback connections, serve and client sharing the 2 cores")
        print("figure                     lookups beside notifications   lookups alone   bare GET /healthz   ratio (beside / bare)")
        print(String(format: "lookups/s                  %28.0f   %13.0f   %17.0f   %5.2f", beside.rate, alone.rate, health.rate, beside.rate / health.rate))
        print(String(format: "p50 latency (ms)           %28.2f   %13.2f   %17.2f   %5.2f", beside.p50 * 1000, alone.p50 * 1000, health.p50 * 1000, beside.p50 / health.p50))
        print(String(format: "p99 latency (ms)           %28.2f   %13.2f   %17.2f   %5.2f", beside.p99 * 1000, alone.p99 * 1000, health.p99 * 1000, beside.p99 / health.p99))
        print(String(format: "  notifications meanwhile: %d in %.1f s (%.0f/s asked %d/s); lookups answered 200: %d and %d of %d", sent, seconds, Double(sent) / seconds,
                     notificationRate, alone.succeeded, beside.succeeded, lookups))
        guard alone.succeeded == lookups, beside.succeeded == lookups else { throw ValidationError("not every lookup was answered 200 with the user") }
    }
}

/// A flag one task sets and another reads.
final class Stopping: Sendable {
    private let flag = Synchronization.Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}
