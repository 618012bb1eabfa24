import AppleID
import Foundation
import Intake
import Ledger
import NotificationServer
import TestSupport
import Testing

/// Claims behind Apple's signature whose numbers once trapped: each refused by `serve` with
/// a recorded reason, the server still answering.
@Suite("claims with numbers no clock gives are refused, never a trap")
struct OutsideClaimTests {
    @Test(
        "serve: real_user_status Int64.min, exp as the string of Int64.max or of 400 digits, exp 10^15 - 1 s, iat as the string of Int64.min: each 400 invalid-claim, recorded"
    )
    func extremeNumbers() async throws {
        let f = try await IntakeFixture()
        let server = try await RunningHandoverServer(
            HandoverServer(
                intake: f.intake,
                configuration: ServeConfiguration(port: 0, signInSecret: try BearerSecret(secret: ServerTests.secret, for: .signIn)),
                logger: IntakeFixture.quiet))
        let cases: [(String, [String: Any], String)] = [
            ("real_user_status", ["real_user_status": Int64.min], "real_user_status is not an integer below a billion"),
            ("exp string of Int64.max", ["exp": String(Int64.max)], "exp is not a number of seconds from 1970 to 9999"),
            ("exp string of 400 digits", ["exp": String(repeating: "9", count: 400)], "exp is not a number of seconds from 1970 to 9999"),
            ("exp 10^15 - 1", ["exp": 999_999_999_999_999], "exp is not a number of seconds from 1970 to 9999"),
            ("iat string", ["iat": String(Int64.min)], "iat is not a number of seconds from 1970 to 9999"),
        ]
        try await withHTTPClient { http in
            for (index, (name, change, detail)) in cases.enumerated() {
                let claims = f.identityClaims(sub: "001.b.\(index)", transferSub: "T.\(index)").merging(change) { $1 }
                let body = try JSONSerialization.data(withJSONObject: ["identity_token": try IntakeFixture.signed(claims)])
                let answer = try await http.send(
                    server.baseURL + "/apple/sign-ins", body: body, headers: [("Authorization", "Bearer " + ServerTests.secret)])
                #expect(answer.status == 400 && answer.json["reason"] as? String == "invalid-claim", "\(name): \(answer.body)")
                #expect((answer.json["detail"] as? String)?.contains(detail) == true, "\(name): \(answer.body)")
            }
            // Notifications: the same numbers as an event time, refused the same way.
            let payload = try IntakeFixture.signed(try f.notificationClaims(type: "email-disabled", eventTime: .max))
            let answer = try await http.send(server.baseURL + "/apple/notifications", body: IntakeFixture.body(payload))
            #expect(answer.status == 400 && answer.json["reason"] as? String == "invalid-claim", "\(answer.body)")
            let health = try await http.send(server.baseURL + "/healthz", method: .GET)
            #expect(health.status == 200, "\(health.body)")
        }
        #expect(try f.events(.signInRejected).count == cases.count && f.events(.notificationRejected).count == 1)
        await server.stop()
    }
}
