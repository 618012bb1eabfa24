import AppleID
import AppleSimulator
import ArgumentParser
import CryptoExtras
import Foundation
import Intake
import Ledger
import Logging
import NotificationServer
import Projections
import Synchronization

/// `handover-lab bench-lookups`: the app backend's `GET /v1/transfer-subs/{id}` through
/// `handover serve` on team B's ledger, while Apple's notifications arrive at a steady rate,
/// against bare `GET /healthz` round trips on the same connections in the same run.
struct LookupBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-lookups", abstract: "Measure lookups through handover serve beside a steady stream of notifications.")

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
        let keys = AppleKeySet(.fixed(try await JSONWebKeySet(json: Data(minter.jwks().utf8))))
        let server = try await RunningHandoverServer(
            HandoverServer(
                intake: AppleIntake(ledger: opened, projection: projection, keys: keys, logger: logger),
                configuration: ServeConfiguration(port: 0, signInSecret: BearerSecret(secret: secret, for: .signIn)), logger: logger))
        // Lookups and notifications go through bare keep-alive sockets, one thread each: the
        // client's cost stays small beside serve's (AsyncHTTPClient spends more than a lookup).
        guard let port = server.baseURL.split(separator: ":").last.flatMap({ Int($0) }) else { throw ValidationError("no port in \(server.baseURL)") }
        let authorization = "Authorization: Bearer \(secret)\r\n"
        @Sendable func gets(_ path: @escaping @Sendable (Int) -> String) throws -> Measurement {
            try measureOnThreads(count: lookups, threads: connections, connect: { try RawHTTPClient(port: port) }) { getter, i in
                let answer = try getter.get(path(i), headers: authorization)
                return answer.status == 200 && answer.body.contains(UInt8(ascii: "\""))
            }
        }

        let subs = transferSubs
        let health = try gets { _ in "/healthz" }
        let alone = try gets { i in "/v1/transfer-subs/" + subs[i % subs.count] }
        // Beside a steady stream of notifications: `notificationRate` a second, each on its own schedule.
        let stop = Stopping()
        // Enough for the lookups beside them at half the rate they ran alone (minted first: RS256 signing costs CPU).
        let expected = Double(lookups) / max(alone.rate, 1) * 2 + 5
        let bodies = try await (0..<Int(expected * Double(notificationRate))).asyncMap { i in
            try await minter.notification(
                audience: clientID, type: i % 2 == 0 ? "email-disabled" : "email-enabled", sub: "bench-lookup.\(i)", eventTime: now,
                jti: "bench-lookup-\(UUID().uuidString)")
        }
        // Each of 8 threads posts on its own schedule, together `notificationRate` a second.
        let streamThreads = 8
        let streamed = Synchronization.Atomic<Int>(0)
        let streamGroup = DispatchGroup()
        let streamStarted = ContinuousClock.now
        let rate = notificationRate
        for t in 0..<streamThreads {
            streamGroup.enter()
            let client = try RawHTTPClient(port: port)
            Thread {
                defer { streamGroup.leave() }
                let interval = Duration.seconds(1) / rate * streamThreads
                var n = 0
                while !stop.isSet {
                    let index = n * streamThreads + t
                    guard index < bodies.count else { return }
                    let due = streamStarted + interval * n + Duration.seconds(1) / rate * t
                    let wait = due - ContinuousClock.now
                    if wait > .zero { usleep(UInt32(wait.inSeconds * 1_000_000)) }
                    // A notification refused or not answered shows in the count recorded, below.
                    _ = try? client.post("/apple/notifications", body: bodies[index])
                    streamed.add(1, ordering: .relaxed)
                    n += 1
                }
            }.start()
        }
        let recordedBefore = try opened.read { try $0.sequences(of: .notificationReceived).count }
        let beside = try gets { i in "/v1/transfer-subs/" + subs[(i * 7 + 3) % subs.count] }
        stop.set()
        streamGroup.wait()
        let (sent, seconds) = (streamed.load(ordering: .relaxed), (ContinuousClock.now - streamStarted).inSeconds)
        await server.stop()
        let recorded = try opened.read { try $0.sequences(of: .notificationReceived).count } - recordedBefore

        print("Lookup benchmark: \(lookups) lookups of received users over \(connections) loopback connections, serve and client sharing the 2 cores")
        print("figure                     lookups beside notifications   lookups alone   bare GET /healthz   ratio (beside / bare)")
        print(
            String(
                format: "lookups/s                  %28.0f   %13.0f   %17.0f   %5.2f", beside.rate, alone.rate, health.rate, beside.rate / health.rate
            ))
        print(
            String(
                format: "p50 latency (ms)           %28.2f   %13.2f   %17.2f   %5.2f", beside.p50 * 1000, alone.p50 * 1000, health.p50 * 1000,
                beside.p50 / health.p50))
        print(
            String(
                format: "p99 latency (ms)           %28.2f   %13.2f   %17.2f   %5.2f", beside.p99 * 1000, alone.p99 * 1000, health.p99 * 1000,
                beside.p99 / health.p99))
        print(
            String(
                format: "  notifications meanwhile: %d sent in %.1f s (%.0f/s, asked %d/s), %d recorded; lookups answered 200: %d and %d of %d", sent,
                seconds,
                Double(sent) / seconds, notificationRate, recorded, alone.succeeded, beside.succeeded, lookups))
        guard alone.succeeded == lookups, beside.succeeded == lookups else {
            throw ValidationError("not every lookup was answered 200 with the user")
        }
        guard recorded == sent else { throw ValidationError("\(sent) notifications sent, \(recorded) recorded") }
    }
}

/// A flag one task sets and another reads.
final class Stopping: Sendable {
    private let flag = Synchronization.Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}
