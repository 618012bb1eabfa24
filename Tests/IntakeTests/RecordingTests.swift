import AppleID
import Basics
import Foundation
import Intake
import Ledger
import Projections
import TestSupport
import Testing

@Suite("Recording: what Apple really sends is accepted, once")
struct RecordingTests {
    @Test("events as a JSON string and as an object; account-deleted and account-delete")
    func bothForms() async throws {
        let f = try await IntakeFixture(policy: .keep)
        let forms: [(String, Bool, NotificationReceived.Kind)] = [
            ("email-disabled", true, .emailDisabled), ("email-enabled", false, .emailEnabled),
            ("account-deleted", true, .accountDeleted), ("account-delete", false, .accountDeleted),
        ]
        for (i, (type, asString, kind)) in forms.enumerated() {
            let body = IntakeFixture.body(
                try IntakeFixture.signed(try f.notificationClaims(type: type, sub: "001.form.\(i)", eventsAsString: asString)))
            let receipt = try await f.intake.receiveNotification(body)
            guard case .recorded = receipt.outcome else {
                Issue.record("\(type) (events as \(asString ? "string" : "object")): \(receipt.outcome)")
                continue
            }
            guard case .notificationReceived(let recorded)? = try f.ledger.read({ try $0.event(receipt.sequence) })?.body else {
                Issue.record("no event")
                continue
            }
            #expect(recorded.kind == kind)
        }
        #expect(try f.events(.notificationReceived).count == 4)
        #expect(try f.events(.notificationRejected).isEmpty)
    }

    @Test("Booleans as strings or JSON Booleans, event_time in seconds or milliseconds, exp within the leeway")
    func lenientClaims() async throws {
        let f = try await IntakeFixture()
        var claims = f.identityClaims(sub: "001.lenient.0001")
        claims["email_verified"] = true
        claims["is_private_email"] = "false"
        claims["iat"] = f.now - 630
        claims["exp"] = f.now - 30
        let signIn = try await f.intake.receiveSignIn(try IntakeFixture.signed(claims))
        #expect(signIn.rejection == nil, "\(signIn.rejection?.description ?? "")")
        guard case .signInVerified(let body)? = try f.ledger.read({ try $0.event(signIn.sequence) })?.body else {
            Issue.record("no sign-in event")
            return
        }
        #expect(body.emailVerified == true && body.isPrivateEmail == false && body.realUserStatus == 2)

        let millis: Int64 = 1_790_000_000_123
        let note = try await f.intake.receiveNotification(
            IntakeFixture.body(try IntakeFixture.signed(try f.notificationClaims(type: "consent-revoked", eventTime: millis))))
        let event = try #require(try f.ledger.read { try $0.event(note.sequence) })
        #expect(event.occurredAt == Timestamp(microseconds: millis * 1000))
    }

    @Test("A redelivered jti is acknowledged and recorded once, even re-signed")
    func redelivery() async throws {
        let f = try await IntakeFixture()
        let claims = try f.notificationClaims(type: "email-disabled", jti: "jti-redelivered", email: "relay@privaterelay.appleid.com")
        let body = IntakeFixture.body(try IntakeFixture.signed(claims))
        let first = try await f.intake.receiveNotification(body)
        guard case .recorded(let sequence) = first.outcome else {
            Issue.record("\(first.outcome)")
            return
        }
        let again = try await f.intake.receiveNotification(body)
        var resigned = claims
        resigned["iat"] = f.now + 1
        let third = try await f.intake.receiveNotification(IntakeFixture.body(try IntakeFixture.signed(resigned)))
        for receipt in [again, third] {
            guard case .duplicate(let of) = receipt.outcome else {
                Issue.record("\(receipt.outcome)")
                continue
            }
            #expect(of == sequence)
        }
        #expect(try f.events(.notificationReceived).count == 1)
        #expect(try f.user(.recipientSub, "001.b.0001")?.notifications == 1)
        // Concurrent redeliveries race for the same key: still one event.
        let body2 = IntakeFixture.body(try IntakeFixture.signed(try f.notificationClaims(type: "consent-revoked", jti: "jti-raced")))
        let intake = f.intake
        let outcomes = try await withThrowingTaskGroup(of: IntakeReceipt.self) { group in
            for _ in 0..<16 { group.addTask { try await intake.receiveNotification(body2) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { if case .recorded = $0.outcome { return true } else { return false } }.count == 1)
        #expect(try f.events(.notificationReceived).count == 2)
    }

    @Test("A nonce the caller passes must match, unless Apple says nonces are unsupported")
    func nonces() async throws {
        let f = try await IntakeFixture()
        var claims = f.identityClaims(sub: "001.nonce.0001")
        claims["nonce"] = "n-123"
        claims["nonce_supported"] = true
        let matched = try await f.intake.receiveSignIn(try IntakeFixture.signed(claims), nonce: "n-123")
        var unsupported = f.identityClaims(sub: "001.nonce.0002")
        unsupported["nonce_supported"] = false
        let optional = try await f.intake.receiveSignIn(try IntakeFixture.signed(unsupported), nonce: "n-456")
        for (receipt, checked) in [(matched, true), (optional, false)] {
            guard case .signInVerified(let body)? = try f.ledger.read({ try $0.event(receipt.sequence) })?.body else {
                Issue.record("\(receipt.outcome)")
                continue
            }
            #expect(body.nonceChecked == checked)
        }
    }
}
