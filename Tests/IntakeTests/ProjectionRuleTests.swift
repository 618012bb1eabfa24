import AppleID
import Basics
import Foundation
import Intake
import Ledger
import Projections
import TestSupport
import Testing

@Suite("Projection rules for sign-ins and notifications")
struct ProjectionRuleTests {
    /// Records an exchange as `exchange` would: the email sealed under the transfer_sub.
    private func exchanged(_ f: IntakeFixture, account: String, transferSub: String, sub: String, email: String) async throws {
        let sealed = try await f.ledger.sealer.seal(email, for: Identifier(.transferSub, transferSub))
        _ = try await f.ledger.append(
            EventDraft(
                .transferIDExchanged(TransferIDExchanged(email: sealed, isPrivateEmail: true)),
                identifiers: Identifiers(accountID: account, transferSub: transferSub, recipientSub: sub),
                idempotencyKey: "exchange:" + transferSub))
    }

    private func notify(_ f: IntakeFixture, _ type: String, sub: String, email: String? = nil, eventTime: Int64? = nil) async throws -> IntakeReceipt
    {
        let receipt = try await f.intake.receiveNotification(
            IntakeFixture.body(try IntakeFixture.signed(try f.notificationClaims(type: type, sub: sub, email: email, eventTime: eventTime))))
        #expect(receipt.rejection == nil, "\(receipt.rejection?.description ?? "")")
        return receipt
    }

    @Test("A sign-in with transfer_sub migrates a pending user via sign-in, and leaves an exchanged one as it was")
    func signInLinks() async throws {
        let f = try await IntakeFixture()
        let failure = CallFailure(kind: .serverError, httpStatus: 500, message: "Apple answered 500")
        _ = try await f.ledger.append(
            EventDraft(
                .transferIDExchangeFailed(TransferIDExchangeFailed(failure: failure)),
                identifiers: Identifiers(accountID: "acct-1", transferSub: "T.1")))
        try await exchanged(f, account: "acct-2", transferSub: "T.2", sub: "B.2", email: "two@privaterelay.appleid.com")
        let exchangedAt = try #require(try f.user(.transferSub, "T.2")?.migratedAt)

        for (sub, transferSub) in [("B.1", "T.1"), ("B.2", "T.2")] {
            let receipt = try await f.intake.receiveSignIn(try IntakeFixture.signed(f.identityClaims(sub: sub, transferSub: transferSub)))
            #expect(receipt.rejection == nil)
        }
        let one = try #require(try f.user(.transferSub, "T.1"))
        #expect(one.status == .migrated && one.migratedVia == .signIn && one.recipientSub == "B.1" && one.accountID == "acct-1")
        #expect(try f.user(.recipientSub, "B.1")?.key == one.key)
        let two = try #require(try f.user(.transferSub, "T.2"))
        #expect(two.migratedVia == .exchange && two.migratedAt == exchangedAt)
        #expect(try f.users().count == 2)
    }

    @Test("Email forwarding follows email-enabled and email-disabled; consent-revoked sets when")
    func forwardingAndConsent() async throws {
        let f = try await IntakeFixture()
        try await exchanged(f, account: "acct-3", transferSub: "T.3", sub: "B.3", email: "three@privaterelay.appleid.com")
        _ = try await notify(f, "email-disabled", sub: "B.3", email: "three@privaterelay.appleid.com")
        #expect(try f.user(.recipientSub, "B.3")?.emailForwarding == false)
        _ = try await notify(f, "email-enabled", sub: "B.3", email: "three@privaterelay.appleid.com")
        #expect(try f.user(.recipientSub, "B.3")?.emailForwarding == true)
        let revokedAt: Int64 = 1_790_000_000
        _ = try await notify(f, "consent-revoked", sub: "B.3", eventTime: revokedAt)
        let user = try #require(try f.user(.recipientSub, "B.3"))
        #expect(user.consentRevokedAt == Timestamp(seconds: revokedAt))
        #expect(user.notifications == 3 && user.accountID == "acct-3" && user.status == .migrated)
    }

    @Test("account-deleted with the default policy erases: no plaintext email anywhere, the chain verifies")
    func deletionErases() async throws {
        let f = try await IntakeFixture()
        let email = "deleted-person@privaterelay.appleid.com"
        try await exchanged(f, account: "acct-4", transferSub: "T.4", sub: "B.4", email: email)
        _ = try await notify(f, "email-enabled", sub: "B.4", email: email)
        var claims = f.identityClaims(sub: "B.4", transferSub: "T.4")
        claims["email"] = email
        _ = try await f.intake.receiveSignIn(try IntakeFixture.signed(claims))
        let sealed = try #require(try f.user(.recipientSub, "B.4")?.email)
        #expect(try f.ledger.sealer.open(sealed) == email)

        let deletion = try await notify(f, "account-deleted", sub: "B.4")
        #expect(deletion.erased)
        let user = try #require(try f.user(.recipientSub, "B.4"))
        #expect(user.accountDeletedAt != nil && user.erasedAt != nil && user.email == nil)
        #expect(try f.ledger.sealer.open(sealed) == nil)
        #expect(try f.events(.userErased).count == 1)

        // A later notification with the address does not bring it back.
        _ = try await notify(f, "email-disabled", sub: "B.4", email: email)
        #expect(try f.user(.recipientSub, "B.4")?.email == nil)
        #expect(try f.ledger.verify().isIntact)
        f.ledger.close()
        #expect(try !filesContain(f.dir.path, email))
        #expect(try !filesContain(f.dir.path, "deleted-person"))
    }

    @Test("A crash between recording the deletion and erasing is finished by Apple's redelivery")
    func deletionRedelivered() async throws {
        let f = try await IntakeFixture()
        try await exchanged(f, account: "acct-5", transferSub: "T.5", sub: "B.5", email: "five@privaterelay.appleid.com")
        let body = IntakeFixture.body(try IntakeFixture.signed(try f.notificationClaims(type: "account-deleted", sub: "B.5", jti: "jti-delete-5")))
        // The notification alone, as if the process died before erasing.
        let verified = try await f.intake.verifier.verifyNotification(body: body)
        _ = try await f.ledger.append(
            EventDraft(
                .notificationReceived(NotificationReceived(kind: .accountDeleted, eventTime: Timestamp(verified.eventTime))),
                identifiers: Identifiers(recipientSub: "B.5", jti: verified.jti), idempotencyKey: "notification:" + verified.jti))
        #expect(try f.user(.recipientSub, "B.5")?.erasedAt == nil)
        let redelivered = try await f.intake.receiveNotification(body)
        guard case .duplicate = redelivered.outcome else {
            Issue.record("\(redelivered.outcome)")
            return
        }
        #expect(redelivered.erased)
        #expect(try f.user(.recipientSub, "B.5")?.erasedAt != nil)
        let third = try await f.intake.receiveNotification(body)
        #expect(!third.erased)
        #expect(try f.events(.userErased).count == 1)
    }

    @Test("With --on-account-deleted keep, the deletion is recorded and the data kept")
    func deletionKept() async throws {
        let f = try await IntakeFixture(policy: .keep)
        try await exchanged(f, account: "acct-6", transferSub: "T.6", sub: "B.6", email: "six@privaterelay.appleid.com")
        let receipt = try await notify(f, "account-deleted", sub: "B.6")
        #expect(!receipt.erased)
        let user = try #require(try f.user(.recipientSub, "B.6"))
        #expect(user.accountDeletedAt != nil && user.erasedAt == nil)
        #expect(try f.ledger.sealer.open(try #require(user.email)) == "six@privaterelay.appleid.com")
        #expect(try f.events(.userErased).isEmpty)
    }

    @Test("Notifications about a sub never seen are kept and listed as unmatched")
    func unmatched() async throws {
        let f = try await IntakeFixture()
        try await exchanged(f, account: "acct-7", transferSub: "T.7", sub: "B.7", email: "seven@privaterelay.appleid.com")
        _ = try await notify(f, "consent-revoked", sub: "B.stranger")
        _ = try await f.intake.receiveSignIn(try IntakeFixture.signed(f.identityClaims(sub: "B.walk-in")))
        let table = try f.projection.read(f.ledger) { snapshot, _ in
            try ComplianceQueries(snapshot: snapshot, time: .now(), sealer: nil).unmatched()
        }
        let subs = table.rows.map { $0["recipient_sub"].text }.sorted()
        #expect(subs == ["B.stranger", "B.walk-in"])
        #expect(try f.user(.recipientSub, "B.stranger")?.consentRevokedAt != nil)
        #expect(try f.user(.recipientSub, "B.7")?.status == .migrated)
    }
}
