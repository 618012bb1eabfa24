import AppleID
import AsyncHTTPClient
import Foundation
import Intake
import Ledger
import NIOHTTP1
import NotificationServer
import TestSupport
import Testing

/// Every route of `serve` (``ServeRoute``, from which the router is made) on a sender's ledger
/// and on a recipient's: a route of the recipient team answers 403 on a sender's ledger, naming
/// the ledger and what belongs elsewhere, and records nothing; every other route is answered.
@Suite("whose ledger: every serve route against both roles")
struct ServeRoleTests {
    static let secret = "a-bearer-secret-of-some-length"

    /// One request to `route` with what it needs to pass its other checks (the bearer secret
    /// when `authorized`, a signed body, an identifier).
    private func request(
        _ route: ServeRoute, _ f: IntakeFixture, _ http: HTTPClient, _ baseURL: String, authorized: Bool = true
    ) async throws -> HTTPAnswer {
        let path = route.path.replacingOccurrences(of: "{id}", with: "001.b.0001")
        let auth = authorized ? [("Authorization", "Bearer " + ServeRoleTests.secret)] : []
        switch route.method {
        case .post:
            let body: Data =
                route == .signIns
                ? try JSONSerialization.data(withJSONObject: ["identity_token": try IntakeFixture.signed(f.identityClaims(transferSub: "T.role"))])
                : IntakeFixture.body(try IntakeFixture.signed(try f.notificationClaims(type: "email-disabled")))
            return try await http.send(baseURL + path, body: body, headers: auth)
        default:
            return try await http.send(baseURL + path, method: .GET, headers: auth)
        }
    }

    @Test("on a sender's ledger the recipient's routes answer 403 and change no byte; the rest answer; on a recipient's, none is refused")
    func routesByRole() async throws {
        for role in [LedgerCreated.Role.sender, .recipient] {
            let f = try await IntakeFixture(role: role)
            let server = try await RunningHandoverServer(
                HandoverServer(
                    intake: f.intake,
                    configuration: ServeConfiguration(port: 0, signInSecret: try BearerSecret(secret: ServeRoleTests.secret, for: .signIn)),
                    logger: IntakeFixture.quiet))
            #expect(server.server.refusedRoutes == (role == .sender ? [.signIns, .transferSubLookup, .subLookup] : []))
            try await withHTTPClient { http in
                for route in ServeRoute.allCases {
                    let before = try fileStates(f.ledger.directory).filter { $0.key != "lock.mdb" }
                    let answer = try await request(route, f, http, server.baseURL)
                    if let required = route.role, required.role != role {
                        let expected = "this server's ledger is team AAAA111111's sender ledger; \(required.work)"
                        #expect(answer.status == 403 && answer.json["error"] as? String == "wrong_ledger", "\(route): \(answer.body)")
                        #expect(answer.json["detail"] as? String == expected, "\(route): \(answer.body)")
                        #expect(try fileStates(f.ledger.directory).filter { $0.key != "lock.mdb" } == before, "\(route) changed the ledger")
                        // Said before the secret is asked for: nobody is led to set one on the wrong ledger.
                        let unauthorized = try await request(route, f, http, server.baseURL, authorized: false)
                        #expect(unauthorized.status == 403 && unauthorized.json["detail"] as? String == expected, "\(route): \(unauthorized.body)")
                    } else {
                        #expect(answer.status != 403, "\(role) \(route): \(answer.status) \(answer.body)")
                    }
                }
            }
            #expect(try f.events(.signInVerified).isEmpty == (role == .sender))
            await server.stop()
        }
    }
}
