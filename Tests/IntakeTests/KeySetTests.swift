import AppleID
import AppleSimulator
import AsyncHTTPClient
import Foundation
import Intake
import Ledger
import NIOCore
import NotificationServer
import TestSupport
import Testing

@Suite("Apple's keys: fetched from a JWKS URL, cached, refetched at most once a minute")
struct KeySetTests {
    /// The stand-in, serving its JWKS at /auth/keys.
    private func simulator(_ dir: TemporaryDirectory) async throws -> RunningSimulator {
        let apple = try SimulatorDirectory(path: dir.sub("apple"))
        return try await RunningSimulator(SimulatorServer(directory: apple, rules: .init(), faults: .init(), logger: IntakeFixture.quiet))
    }

    @Test("A known kid is served from the cache; an unknown one refetches only once the minute has passed")
    func refetchLimit() async throws {
        let dir = TemporaryDirectory()
        let apple = try await simulator(dir)
        // The in-process stand-in shares the thread pool with every other test of a parallel
        // run: the fetch gets a deadline far beyond what a busy machine needs. What is counted
        // here is how many fetches, not how fast they are.
        let keys = AppleKeySet(.url(apple.baseURL + "/auth/keys"), timeout: .seconds(120))
        let f = try await IntakeFixture(keys: keys)
        let minter = apple.server.minter
        let claims = try f.notificationClaims(type: "consent-revoked")
        for i in 0..<3 {
            var c = claims
            c["jti"] = "jti-cached-\(i)"
            let receipt = try await f.intake.receiveNotification(IntakeFixture.body(try minter.sign(IntakeFixture.jsonValues(c))))
            #expect(receipt.rejection == nil)
        }
        #expect(await keys.fetches == 1)
        // A kid Apple does not publish: refused without a new fetch inside the minute.
        let stranger = IntakeFixture.body(
            try IntakeFixture.token(header: ["alg": "RS256", "kid": "ROTATED-IN"], claims: claims, key: TestKeys.stranger))
        let refused = try await f.intake.receiveNotification(stranger)
        #expect(refused.rejection?.reason == .unknownKeyID)
        #expect(await keys.fetches == 1)

        // With the minute over (an interval of zero), an unknown kid prompts one fetch.
        let eager = AppleKeySet(.url(apple.baseURL + "/auth/keys"), refetchInterval: .zero, timeout: .seconds(120))
        let g = try await IntakeFixture(keys: eager)
        _ = try await g.intake.receiveNotification(IntakeFixture.body(try minter.sign(IntakeFixture.jsonValues(claims))))
        _ = try await g.intake.receiveNotification(stranger)
        #expect(await eager.fetches == 2)
        await apple.stop()
    }

    @Test("When Apple's keys cannot be fetched nothing is recorded and the server answers 503")
    func unavailable() async throws {
        let keys = AppleKeySet(.url("http://127.0.0.1:9/auth/keys"), timeout: .seconds(1))
        let f = try await IntakeFixture(keys: keys)
        let body = IntakeFixture.body(try IntakeFixture.signed(try f.notificationClaims(type: "consent-revoked")))
        let before = try f.head
        await #expect(throws: AppleKeySet.Unavailable.self) { _ = try await f.intake.receiveNotification(body) }
        let server = try await RunningHandoverServer(
            HandoverServer(intake: f.intake, configuration: ServeConfiguration(port: 0), logger: IntakeFixture.quiet))
        let answer = try await withHTTPClient { http in try await http.send(server.baseURL + "/apple/notifications", body: body) }
        #expect(answer.status == 503, "\(answer.body)")
        // The answer names where the keys were fetched from, so whoever reads it can check that URL.
        let detail = answer.json["detail"] as? String ?? ""
        #expect(
            detail.hasPrefix("Apple's public keys cannot be fetched now (fetching Apple's keys from http://127.0.0.1:9/auth/keys failed"), "\(detail)"
        )
        #expect(try f.head == before)
        await server.stop()
    }

    @Test("serve started without Apple's address: its first line names the keys' URL, and a warning follows that they cannot be fetched")
    func serveNamesTheKeysURL() async throws {
        let dir = TemporaryDirectory()
        let (ledger, _) = try IntakeFixture.commandLineLedger(in: dir)
        let serve = try ServerProcess(["serve", "--ledger", ledger, "--port", "0", "--apple-base-url", "http://127.0.0.1:9"])
        let warning = "warning: Apple's keys cannot be fetched now (fetching Apple's keys from http://127.0.0.1:9/auth/keys failed"
        // The fetch is made once serve listens; the deadline only catches a hang.
        let started = Date()
        while !serve.running.errorOutput.contains(warning), serve.running.isRunning, Date().timeIntervalSince(started) < 60 { usleep(20_000) }
        let stopped = serve.finish()
        let first = String(stopped.out.prefix { $0 != "\n" })
        #expect(first.hasSuffix("recording into \(ledger); Apple's keys from http://127.0.0.1:9/auth/keys"), "\(first)")
        #expect(stopped.err.contains(warning), "\(stopped.err)")
    }

    @Test("A JWKS file is read once; a file with no RSA key is refused")
    func keyFile() async throws {
        let dir = TemporaryDirectory()
        let file = dir.sub("jwks.json")
        try Data(TestKeys.minter.jwks().utf8).write(to: URL(fileURLWithPath: file))
        let keys = AppleKeySet(.file(file))
        let f = try await IntakeFixture(keys: keys)
        let receipt = try await f.intake.receiveSignIn(try IntakeFixture.signed(f.identityClaims()))
        #expect(receipt.rejection == nil)
        await #expect(throws: JSONWebKeySet.Invalid.self) { _ = try await JSONWebKeySet(json: Data(#"{"keys":[{"kty":"EC","kid":"x"}]}"#.utf8)) }
    }
}
