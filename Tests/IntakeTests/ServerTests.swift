import AppleID
import AsyncHTTPClient
import Foundation
import Intake
import Ledger
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import NotificationServer
import TestSupport
import Testing

@Suite("handover serve over loopback HTTP and TLS")
struct ServerTests {
    static let secret = "a-bearer-secret-of-some-length"

    private func start(_ f: IntakeFixture, _ configuration: ServeConfiguration? = nil) async throws -> RunningHandoverServer {
        try await RunningHandoverServer(
            HandoverServer(intake: f.intake, configuration: configuration ?? ServeConfiguration(port: 0), logger: IntakeFixture.quiet))
    }

    @Test("Notifications: 200 once durable, duplicate on redelivery, 400 and 413 with a reason; health and metrics")
    func notifications() async throws {
        let f = try await IntakeFixture()
        let server = try await start(f)
        try await withHTTPClient { http in
            let good = IntakeFixture.body(try IntakeFixture.signed(try f.notificationClaims(type: "email-disabled", jti: "jti-http-1")))
            let first = try await http.send(server.baseURL + "/apple/notifications", body: good)
            #expect(first.status == 200 && first.json["status"] as? String == "recorded", "\(first.body)")
            let sequence = try #require(first.json["sequence"] as? Int)
            #expect(try f.ledger.read { try $0.event(UInt64(sequence)) }?.type == .notificationReceived)
            let again = try await http.send(server.baseURL + "/apple/notifications", body: good)
            #expect(
                again.status == 200 && again.json["status"] as? String == "duplicate" && again.json["sequence"] as? Int == sequence, "\(again.body)")

            let forged = IntakeFixture.body(
                try IntakeFixture.token(
                    header: ["alg": "RS256", "kid": TestKeys.minter.keyID], claims: try f.notificationClaims(type: "account-deleted"),
                    key: TestKeys.stranger))
            let refused = try await http.send(server.baseURL + "/apple/notifications", body: forged)
            #expect(refused.status == 400 && refused.json["reason"] as? String == "bad-signature", "\(refused.body)")
            let large = try await http.send(server.baseURL + "/apple/notifications", body: Data(repeating: UInt8(ascii: "a"), count: 200_000))
            #expect(large.status == 413 && large.json["reason"] as? String == "body-too-large", "\(large.body)")

            let health = try await http.send(server.baseURL + "/healthz", method: .GET)
            #expect(health.status == 200 && health.json["status"] as? String == "ok", "\(health.body)")
            let metrics = try await http.send(server.baseURL + "/metrics", method: .GET)
            #expect(metrics.body.contains("handover_events_recorded_total{type=\"notification-received\"} 1\n"))
            #expect(metrics.body.contains("handover_deliveries_duplicate_total{type=\"notification-received\"} 1\n"))
            #expect(metrics.body.contains("handover_rejections_total{reason=\"bad-signature\"} 1\n"))
            #expect(metrics.body.contains("handover_rejections_total{reason=\"body-too-large\"} 1\n"))
            #expect(metrics.body.contains("handover_append_seconds_count 4\n"))
            #expect(try f.events(.notificationReceived).count == 1 && f.events(.notificationRejected).count == 2)
        }
        await server.stop()
    }

    @Test("Sign-in reports need the bearer secret; without one set they are refused")
    func signInsNeedTheSecret() async throws {
        let f = try await IntakeFixture()
        let token = try IntakeFixture.signed(f.identityClaims(sub: "B.http", transferSub: "T.http"))
        let body = try JSONSerialization.data(withJSONObject: ["identity_token": token])
        try await withHTTPClient { http in
            let closed = try await start(f)
            let withoutSecret = try await http.send(closed.baseURL + "/apple/sign-ins", body: body)
            #expect(withoutSecret.status == 401, "\(withoutSecret.body)")
            await closed.stop()

            let open = try await start(f, ServeConfiguration(port: 0, signInSecret: try BearerSecret(secret: ServerTests.secret, for: .signIn)))
            let url = open.baseURL + "/apple/sign-ins"
            let unauthorized = try await http.send(url, body: body)
            #expect(unauthorized.status == 401, "\(unauthorized.body)")
            let wrong = try await http.send(url, body: body, headers: [("Authorization", "Bearer not-the-secret-at-all")])
            #expect(wrong.status == 401, "\(wrong.body)")
            #expect(try f.events(.signInVerified).isEmpty && f.events(.signInRejected).isEmpty)
            let accepted = try await http.send(url, body: body, headers: [("Authorization", "Bearer " + ServerTests.secret)])
            #expect(accepted.status == 200 && accepted.json["status"] as? String == "recorded", "\(accepted.body)")
            #expect(try f.user(.transferSub, "T.http")?.recipientSub == "B.http")
            await open.stop()
        }
    }

    @Test("Plain HTTP only on loopback unless --insecure-http; TLS needs a certificate and a key")
    func bindRules() throws {
        #expect(throws: ServeConfiguration.Refused.self) { try ServeConfiguration(host: "0.0.0.0") }
        #expect(throws: ServeConfiguration.Refused.self) { try ServeConfiguration(host: "192.168.1.20") }
        #expect(throws: ServeConfiguration.Refused.self) { try ServeConfiguration(host: "127.0.0.1", tlsCertificate: "cert.pem") }
        _ = try ServeConfiguration(host: "0.0.0.0", insecureHTTP: true)
        _ = try ServeConfiguration(host: "0.0.0.0", tlsCertificate: "cert.pem", tlsKey: "key.pem")
        _ = try ServeConfiguration(host: "127.0.0.1")
        _ = try ServeConfiguration(host: "::1")
        _ = try ServeConfiguration(host: "localhost")
    }

    @Test("The command refuses a non-loopback address without TLS, before opening the ledger")
    func commandRefusesPlainHTTP() throws {
        let dir = TemporaryDirectory()
        let r = try runProduct("handover", ["serve", "--ledger", dir.sub("none"), "--host", "0.0.0.0", "--port", "0"])
        #expect(r.status == 2, "\(r.err)")
        #expect(r.err.contains("--insecure-http"), "\(r.err)")
    }

    @Test("TLS: a TLS 1.2 client is served; a client offering only TLS 1.1 gets the server's protocol_version alert")
    func tlsVersions() async throws {
        let f = try await IntakeFixture()
        let cert = f.dir.sub("cert.pem")
        let key = f.dir.sub("key.pem")
        let openssl = try runCommand(
            "/usr/bin/openssl",
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost"])
        try #require(openssl.status == 0, "\(openssl.err)")
        let server = try await start(f, ServeConfiguration(host: "127.0.0.1", port: 0, tlsCertificate: cert, tlsKey: key))
        let port = try #require(Int(server.baseURL.split(separator: ":").last ?? ""))

        var tls12 = TLSConfiguration.makeClientConfiguration()
        tls12.certificateVerification = .none
        tls12.minimumTLSVersion = .tlsv12
        tls12.maximumTLSVersion = .tlsv12
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls12)
        configuration.httpVersion = .http1Only
        let health = try await withHTTPClient(configuration: configuration) { http in
            try await http.send(server.baseURL + "/healthz", method: .GET)
        }
        #expect(health.status == 200, "\(health.body)")

        let outcome = try await TLSProbe.handshake(port: port, version: .tlsv11)
        #expect(outcome.contains("ALERT_PROTOCOL_VERSION"), "\(outcome)")
        let modern = try await TLSProbe.handshake(port: port, version: .tlsv12)
        #expect(modern == "completed")
        await server.stop()
    }
}

/// A bare TLS client that offers exactly one protocol version and reports how the
/// handshake ended: "completed", or the error the server's answer produced.
enum TLSProbe {
    static func handshake(port: Int, version: TLSVersion) async throws -> String {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        tls.minimumTLSVersion = version
        tls.maximumTLSVersion = version
        let context = try NIOSSLContext(configuration: tls)
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: String.self)
        let channel = try await ClientBootstrap(group: group).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                try channel.pipeline.syncOperations.addHandler(HandshakeWatcher(promise: promise))
            }
        }.connect(host: "127.0.0.1", port: port).get()
        let result = try await promise.futureResult.get()
        try? await channel.close()
        return result
    }

    final class HandshakeWatcher: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let promise: EventLoopPromise<String>
        var done = false

        init(promise: EventLoopPromise<String>) { self.promise = promise }

        private func finish(_ text: String) {
            guard !done else { return }
            done = true
            promise.succeed(text)
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? TLSUserEvent, case .handshakeCompleted = event { finish("completed") }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            finish("error: \(error)")
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            finish("closed without an error")
            context.fireChannelInactive()
        }
    }
}
