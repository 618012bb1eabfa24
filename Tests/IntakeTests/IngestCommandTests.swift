import AppleID
import Basics
import Foundation
import Ledger
import TestSupport
import Testing

@Suite("handover ingest")
struct IngestCommandTests {
    @Test("Notification files and sign-in lines on standard input: a summary, rejections named, exit 1 if any")
    func ingest() async throws {
        let f = try await IntakeFixture()
        let (ledger, jwks) = try IntakeFixture.commandLineLedger(in: f.dir)
        var files: [String] = []
        let good = IntakeFixture.body(try IntakeFixture.signed(try f.notificationClaims(type: "email-disabled", jti: "jti-file-1")))
        var foreign = try f.notificationClaims(type: "consent-revoked")
        foreign["aud"] = "com.someone.else"
        for (i, body) in [good, good, IntakeFixture.body(try IntakeFixture.signed(foreign))].enumerated() {
            files.append(f.dir.sub("n\(i).json"))
            try body.write(to: URL(fileURLWithPath: files[i]))
        }
        let notifications = try runProduct("handover", ["ingest", "notification", "--ledger", ledger, "--jwks-file", jwks] + files)
        #expect(notifications.status == 1, "\(notifications.out)\(notifications.err)")
        #expect(
            notifications.out.contains("Ingested 3 notifications: 1 recorded, 1 already recorded, 1 rejected (wrong-audience 1)."),
            "\(notifications.out)")
        #expect(notifications.err.contains("n2.json: rejected (wrong-audience)"))

        let token = try IntakeFixture.signed(f.identityClaims(sub: "B.cli", transferSub: "T.cli"))
        let lines = "\(token)\n\n{\"identity_token\": \"\(token)\"}\n"
        let signIns = try runProduct("handover", ["ingest", "sign-in", "--ledger", ledger, "--jwks-file", jwks, "-"], input: Data(lines.utf8))
        #expect(signIns.status == 0, "\(signIns.err)")
        #expect(signIns.out.contains("Ingested 2 sign-ins: 1 recorded, 1 already recorded, 0 rejected."), "\(signIns.out)")

        let unmatched = try runProduct("handover", ["query", "user", "T.cli", "--ledger", ledger])
        #expect(unmatched.out.contains("B.cli"))
        let verified = try runProduct("handover", ["verify", "--ledger", ledger])
        #expect(verified.status == 0, "\(verified.err)")
    }
}

@Suite("handover ingest sign-in --verify-at")
struct BackfillTests {
    @Test("a token that expired a week ago is recorded when checked at a time inside its validity, refused otherwise, and the event keeps both times")
    func backfill() async throws {
        let f = try await IntakeFixture()
        let (ledger, jwks) = try IntakeFixture.commandLineLedger(in: f.dir)
        // Issued eight days ago, valid for ten minutes: it expired a week ago.
        let issued = f.now - 8 * 86_400
        func token(_ sub: String) throws -> String {
            var claims = f.identityClaims(sub: sub, transferSub: "T.\(sub)")
            claims["iat"] = issued
            claims["exp"] = issued + 600
            return try IntakeFixture.signed(claims)
        }
        func ingest(_ token: String, _ extra: [String]) throws -> (status: Int32, out: String, err: String) {
            try runProduct(
                "handover", ["ingest", "sign-in", "--ledger", ledger, "--jwks-file", jwks] + extra + ["-"], input: Data((token + "\n").utf8))
        }
        let inside = Timestamp(seconds: issued + 300)
        let late = try token("B.late")

        let now = try ingest(late, [])
        #expect(now.status == 1 && now.err.contains("rejected (expired)"), "\(now.err)")
        let after = try ingest(try token("B.after"), ["--verify-at", Timestamp(seconds: issued + 600 + 61).rfc3339])
        #expect(after.status == 1 && after.err.contains("rejected (expired)"), "\(after.err)")
        let before = try ingest(try token("B.before"), ["--verify-at", Timestamp(seconds: issued - 61).rfc3339])
        #expect(before.status == 1 && before.err.contains("rejected (issued-in-future)"), "\(before.err)")
        let future = try ingest(late, ["--verify-at", Timestamp(seconds: f.now + 3_600).rfc3339])
        #expect(future.status != 0 && future.err.contains("in the future"), "\(future.err)")
        let notification = try runProduct(
            "handover", ["ingest", "notification", "--ledger", ledger, "--jwks-file", jwks, "--verify-at", inside.rfc3339, "-"], input: Data())
        #expect(notification.status != 0 && notification.err.contains("sign-ins only"), "\(notification.err)")

        let started = Timestamp.now()
        let backfilled = try ingest(late, ["--verify-at", inside.rfc3339])
        #expect(backfilled.status == 0, "\(backfilled.err)")
        #expect(backfilled.out.contains("Ingested 1 sign-in: 1 recorded, 0 already recorded, 0 rejected."), "\(backfilled.out)")

        let opened = try Ledger.open(at: ledger)
        defer { opened.close() }
        let events = try opened.read { view in try (1...view.head().sequence).compactMap { try view.event($0) } }
        let verified = events.compactMap { event -> (RecordedEvent, SignInVerified)? in
            if case .signInVerified(let body) = event.body { return (event, body) }
            return nil
        }
        try #require(verified.count == 1)
        let (event, body) = verified[0]
        #expect(event.identifiers.transferSub == "T.B.late")
        #expect(body.verifiedAt == inside)
        #expect(body.expiresAt == Timestamp(seconds: issued + 600))
        #expect(event.occurredAt == Timestamp(seconds: issued))
        #expect(event.recordedAt >= started)
        // The sign-in counts as a migration when it happened, not when it was backfilled.
        let user = try runProduct("handover", ["query", "user", "T.B.late", "--ledger", ledger, "--format", "json"])
        #expect(user.status == 0 && user.out.contains(Timestamp(seconds: issued).rfc3339), "\(user.out)")
    }
}
