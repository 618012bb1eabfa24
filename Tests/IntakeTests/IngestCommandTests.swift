import AppleID
import Foundation
import Ledger
import TestSupport
import Testing

@Suite("handover ingest")
struct IngestCommandTests {
    @Test("Notification files and sign-in lines on standard input: a summary, rejections named, exit 1 if any")
    func ingest() async throws {
        let f = try await IntakeFixture()
        let ledger = f.dir.sub("cli-ledger")
        #expect(try runProduct("handover", ["init", "--ledger", ledger, "--team-id", "BBBB222222", "--client-id", IntakeFixture.clientID, "--role", "recipient"]).status == 0)
        let jwks = f.dir.sub("jwks.json")
        try Data(TestKeys.minter.jwks().utf8).write(to: URL(fileURLWithPath: jwks))
        var files: [String] = []
        let good = IntakeFixture.body(try IntakeFixture.signed(try f.notificationClaims(type: "email-disabled", jti: "jti-file-1")))
        var foreign = try f.notificationClaims(type: "consent-revoked")
        foreign["aud"] = "com.someone.else"
        for (i, body) in [good, good, IntakeFixture.body(try IntakeFixture.signed(foreign))].enumerated() {
            files.append(f.dir.sub("n\(i).json"))
            try body.write(to: URL(fileURLWithPath: files[i]))
        }
        let notifications = try runProduct("handover", ["ingest", "notification", "--ledger", ledger, "--jwks-file", jwks] + files)
        #expect(notifications.status == 1)
        #expect(notifications.out.contains("Ingested 3 notifications: 1 recorded, 1 already recorded, 1 rejected (wrong-audience 1)."), "\(notifications.out)")
        #expect(notifications.err.contains("n2.json: rejected (wrong-audience)"))

        let token = try IntakeFixture.signed(f.identityClaims(sub: "B.cli", transferSub: "T.cli"))
        let lines = "\(token)\n\n{\"identity_token\": \"\(token)\"}\n"
        let signIns = try runProduct("handover", ["ingest", "sign-in", "--ledger", ledger, "--jwks-file", jwks, "-"], input: Data(lines.utf8))
        #expect(signIns.status == 0, "\(signIns.err)")
        #expect(signIns.out.contains("Ingested 2 sign-ins: 1 recorded, 1 already recorded, 0 rejected."), "\(signIns.out)")

        let unmatched = try runProduct("handover", ["query", "user", "T.cli", "--ledger", ledger])
        #expect(unmatched.out.contains("B.cli"))
        #expect(try runProduct("handover", ["verify", "--ledger", ledger]).status == 0)
    }
}
