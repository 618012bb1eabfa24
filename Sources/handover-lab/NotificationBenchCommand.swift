import AppleID
import AppleSimulator
import ArgumentParser
import AsyncHTTPClient
import Basics
import CryptoExtras
import Foundation
import Intake
import Ledger
import Logging
import NIOCore
import NotificationServer
import Projections

/// `handover-lab bench-notifications`: Apple's notifications through `handover serve` over
/// loopback HTTP, against a baseline of the same events appended straight to the ledger at
/// the same concurrency.
struct NotificationBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-notifications", abstract: "Measure notification throughput and p99 latency through handover serve.")

    @Option(help: "Notifications to send.") var notifications = 20_000
    @Option(help: "Concurrent connections (and, for the baseline, concurrent appenders).") var connections = 32
    @Option(help: "Scratch directory (emptied first).") var directory = "/tmp/handover-bench-notifications"

    func run() async throws {
        // A bench's earlier directory, if any: there may be none.
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let clientID = "com.example.bench"
        let minter = try TokenMinter(key: _RSA.Signing.PrivateKey(keySize: .bits2048))
        let now = Int64(Date().timeIntervalSince1970)
        let types = ["email-disabled", "email-enabled", "consent-revoked", "account-deleted"]
        let bodies = try await (0..<notifications).asyncMap { i in
            try await minter.notification(
                audience: clientID, type: types[i % 4], sub: "B.\(i)", email: i % 4 < 2 ? "relay-\(i)@privaterelay.appleid.com" : nil,
                eventTime: now, jti: "bench-\(i)")
        }
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        func makeLedger(_ name: String) async throws -> (Ledger, UserProjection) {
            let projection = UserProjection()
            let created = LedgerCreated(teamID: "BBBB222222", clientIDs: [clientID], role: .recipient, ledgerID: name)
            return (try await Ledger.create(at: directory + "/" + name, created, folders: [projection]), projection)
        }

        // Baseline: the same events, appended directly by as many tasks as there are connections.
        let (direct, _) = try await makeLedger("direct")
        let baseline = try await measure(count: notifications, workers: connections) { i in
            let body = NotificationReceived(kind: NotificationReceived.Kind(rawValue: types[i % 4])!, eventTime: Timestamp(seconds: now))
            _ = try await direct.append(
                EventDraft(
                    .notificationReceived(body), identifiers: Identifiers(recipientSub: "B.\(i)", jti: "bench-\(i)"),
                    occurredAt: Timestamp(seconds: now), idempotencyKey: "notification:bench-\(i)"))
            return true
        }
        direct.close()

        // Through serve: HTTP, verification, sealing, deduplication, erasure on deletion.
        let (served, roundTrips) = try await serve(
            bodies, ledger: try await makeLedger("served"), minter: minter, logger: logger, withRoundTrips: true)

        print(
            "Notification benchmark: \(notifications) notifications (RS256, a quarter of them account-deleted and erased), \(connections) connections over loopback"
        )
        print("figure                               serve      direct appends  ratio    bare HTTP GET  ratio")
        print(
            String(
                format: "notifications/s                    %7.0f   %13.0f  %5.2f   %12.0f  %5.2f", served.rate, baseline.rate,
                served.rate / baseline.rate, roundTrips.rate, served.rate / roundTrips.rate))
        print(
            String(
                format: "p50 latency (ms)                   %7.2f   %13.2f  %5.2f   %12.2f  %5.2f", served.p50 * 1000, baseline.p50 * 1000,
                served.p50 / baseline.p50, roundTrips.p50 * 1000, served.p50 / roundTrips.p50))
        print(
            String(
                format: "p99 latency (ms)                   %7.2f   %13.2f  %5.2f   %12.2f  %5.2f", served.p99 * 1000, baseline.p99 * 1000,
                served.p99 / baseline.p99, roundTrips.p99 * 1000, served.p99 / roundTrips.p99))
        print("  acknowledged \(served.succeeded), recorded \(served.recorded); client and server share the 2 cores")
        guard served.succeeded == notifications, served.recorded == notifications else {
            throw ValidationError("not every notification was acknowledged and recorded")
        }

        // Sealing: every notification names a new user; with an address each needs a new data key.
        func emailEnabled(_ withAddress: Bool) async throws -> [String] {
            try await (0..<notifications).asyncMap { i in
                try await minter.notification(
                    audience: clientID, type: "email-enabled", sub: "S.\(i)", email: withAddress ? "relay-\(i)@privaterelay.appleid.com" : nil,
                    eventTime: now, jti: "seal-\(withAddress)-\(i)")
            }
        }
        let (plain, _) = try await serve(
            try await emailEnabled(false), ledger: try await makeLedger("without-addresses"), minter: minter, logger: logger, withRoundTrips: false)
        let (sealing, _) = try await serve(
            try await emailEnabled(true), ledger: try await makeLedger("with-addresses"), minter: minter, logger: logger, withRoundTrips: false)
        print("")
        print("Sealing: \(notifications) email-enabled notifications, each for a new user, through serve")
        print("figure                       with addresses   without  ratio")
        print(String(format: "notifications/s                    %7.0f   %7.0f  %5.2f", sealing.rate, plain.rate, sealing.rate / plain.rate))
        print(
            String(format: "p99 latency (ms)                   %7.2f   %7.2f  %5.2f", sealing.p99 * 1000, plain.p99 * 1000, sealing.p99 / plain.p99))
        guard sealing.recorded == notifications, plain.recorded == notifications else { throw ValidationError("not every notification was recorded") }

        // Flood: valid notifications from one address, alone and while forgeries pour in from another.
        let flood = NotificationBenchCommand.flood
        let forger = try TokenMinter(key: _RSA.Signing.PrivateKey(keySize: .bits2048))
        func valid(_ tag: String) async throws -> [String] {
            try await (0..<flood.valid).asyncMap {
                try await minter.notification(audience: clientID, type: "email-disabled", sub: "F.\($0)", eventTime: now, jti: "\(tag)-\($0)")
            }
        }
        let forged = try await (0..<flood.forgeries).asyncMap {
            try await forger.notification(audience: clientID, type: "account-deleted", sub: "F.\($0 % 100)", eventTime: now, jti: "forged-\($0)")
        }
        let alone = try await floodRun(
            valid: try await valid("alone"), forged: [], ledger: try await makeLedger("flood-alone"), minter: minter, logger: logger)
        let flooded = try await floodRun(
            valid: try await valid("flooded"), forged: forged, ledger: try await makeLedger("flood"), minter: minter, logger: logger)
        print("")
        print(
            "Flood guard: \(flood.valid) valid notifications from one address, alone and beside \(flood.forgeries) forgeries from another (budget 60 a minute)"
        )
        print("figure                         beside the flood     alone  ratio")
        print(
            String(
                format: "valid notifications/s               %7.0f   %7.0f  %5.2f", flooded.valid.rate, alone.valid.rate,
                flooded.valid.rate / alone.valid.rate))
        print(
            String(
                format: "valid p50 latency (ms)              %7.2f   %7.2f  %5.2f", flooded.valid.p50 * 1000, alone.valid.p50 * 1000,
                flooded.valid.p50 / alone.valid.p50))
        print(
            String(
                format: "valid p99 latency (ms)              %7.2f   %7.2f  %5.2f", flooded.valid.p99 * 1000, alone.valid.p99 * 1000,
                flooded.valid.p99 / alone.valid.p99))
        print(
            "  forgeries: \(flooded.refusalEvents) recorded one by one, \(flooded.summaries) summary event(s); valid recorded \(flooded.valid.recorded) of \(flood.valid)"
        )
        guard flooded.valid.recorded == flood.valid, alone.valid.recorded == flood.valid else {
            throw ValidationError("not every valid notification was recorded")
        }
    }

    /// The flood section's sizes.
    private static let flood = (valid: 1_000, forgeries: 10_000)

    /// Serves `ledger` behind a trusted proxy (127.0.0.1); posts `valid` from one forwarded
    /// address while `forged` come from another, over `connections` connections in all.
    private func floodRun(
        valid: [String], forged: [String], ledger opened: (Ledger, UserProjection), minter: TokenMinter,
        logger: Logger
    ) async throws -> (valid: Measurement, refusalEvents: Int, summaries: Int) {
        let (ledger, projection) = opened
        let keys = AppleKeySet(.fixed(try await JSONWebKeySet(json: Data(minter.jwks().utf8))))
        let server = try await RunningHandoverServer(
            HandoverServer(
                intake: AppleIntake(ledger: ledger, projection: projection, keys: keys, logger: logger),
                configuration: ServeConfiguration(port: 0, trustedProxy: "127.0.0.1"), logger: logger))
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let url = server.baseURL + "/apple/notifications"
        @Sendable func post(_ body: String, from address: String) async throws -> Bool {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "X-Forwarded-For", value: address)
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await http.execute(request, timeout: .seconds(120))
            _ = try await response.body.collect(upTo: 1 << 16)
            return response.status == .ok
        }
        let workers = max(1, connections / 2)
        async let flooding = measure(count: forged.count, workers: workers) { i in try await post(forged[i], from: "203.0.113.7") }
        var measured = try await measure(count: valid.count, workers: workers) { i in try await post(valid[i], from: "17.58.0.9") }
        _ = try await flooding
        try await http.shutdown()
        await server.stop()
        let counts = try ledger.read { view in
            (
                try view.sequences(of: .notificationReceived).count, try view.sequences(of: .notificationRejected).count,
                try view.sequences(of: .rejectionsSummarized).count
            )
        }
        ledger.close()
        measured.recorded = counts.0
        return (measured, counts.1, counts.2)
    }

    /// Serves `ledger`, posts `bodies` over `connections` connections; with `withRoundTrips`,
    /// first measures bare GET /healthz round trips on the same connections.
    private func serve(
        _ bodies: [String], ledger opened: (Ledger, UserProjection), minter: TokenMinter, logger: Logger,
        withRoundTrips: Bool
    ) async throws -> (Measurement, Measurement) {
        let (ledger, projection) = opened
        let keys = AppleKeySet(.fixed(try await JSONWebKeySet(json: Data(minter.jwks().utf8))))
        let server = try await RunningHandoverServer(
            HandoverServer(
                intake: AppleIntake(ledger: ledger, projection: projection, keys: keys, logger: logger),
                configuration: ServeConfiguration(port: 0), logger: logger))
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        var roundTrips = Measurement(rate: 0, p50: 0, p99: 0, succeeded: 0)
        if withRoundTrips {
            let health = server.baseURL + "/healthz"
            roundTrips = try await measure(count: bodies.count, workers: connections) { _ in
                let response = try await http.execute(HTTPClientRequest(url: health), timeout: .seconds(60))
                _ = try await response.body.collect(upTo: 1 << 16)
                return response.status == .ok
            }
        }
        let url = server.baseURL + "/apple/notifications"
        var served = try await measure(count: bodies.count, workers: connections) { i in
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.body = .bytes(ByteBuffer(string: bodies[i]))
            let response = try await http.execute(request, timeout: .seconds(60))
            _ = try await response.body.collect(upTo: 1 << 16)
            return response.status == .ok
        }
        try await http.shutdown()
        await server.stop()
        served.recorded = try ledger.read { try $0.sequences(of: .notificationReceived).count }
        ledger.close()
        return (served, roundTrips)
    }
}
