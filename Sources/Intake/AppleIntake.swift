import AppleID
import Basics
import Crypto
import Foundation
import Ledger
import Logging
import Projections

/// Records what Apple signs, verified and exactly once: identity tokens the app backend
/// reports after a sign-in, and Apple's server-to-server notifications. `serve` and `ingest`
/// both go through here.
///
/// A verified delivery becomes "sign-in verified" or "notification received"; a refused one
/// "sign-in rejected" or "notification rejected" with the reason and the payload's SHA-256,
/// never the payload. Notifications are deduplicated by `jti`, sign-ins and refusals by the
/// payload's hash, through the ledger's idempotency keys: a redelivery is acknowledged and
/// not recorded twice. When Apple reports an account deleted and the ledger's policy is
/// `erase`, the user's personal data is erased before the delivery is acknowledged.
public final class AppleIntake: Sendable {
    public let ledger: Ledger
    public let projection: UserProjection
    public let verifier: AppleTokenVerifier
    /// The ledger's settings: role (which `sub` Apple's tokens carry) and deletion policy.
    public let settings: LedgerCreated
    private let logger: Logger

    /// An intake for `ledger`, whose projection must be `projection`, verifying with `keys`
    /// for the ledger's client IDs.
    public init(ledger: Ledger, projection: UserProjection, keys: AppleKeySet, logger: Logger = Logger(label: "handover.intake")) throws {
        self.ledger = ledger
        self.projection = projection
        self.settings = try ledger.identity()
        self.verifier = AppleTokenVerifier(keys: keys, audiences: settings.clientIDs)
        self.logger = logger
    }

    /// The identifier kind of a `sub` in Apple's tokens for this ledger's team.
    public var subKind: IdentifierKind { settings.role.subKind }

    // MARK: Notifications

    /// Verifies and records one notification body as Apple POSTs it (`{"payload": "<JWS>"}`).
    ///
    /// Throws only when the delivery could not be judged or recorded (Apple's keys
    /// unavailable, ledger failure): the caller should answer so that Apple retries.
    ///
    /// A refusal is recorded unless `admitRejection` (given the payload's SHA-256) says no:
    /// then nothing is recorded and the receipt says it was suppressed.
    public func receiveNotification(
        _ body: Data, now: Date = Date(), admitRejection: (@Sendable (_ payloadSHA256: String) -> Bool)? = nil
    ) async throws -> IntakeReceipt {
        let notification: AppleNotification
        do { notification = try await verifier.verifyNotification(body: body, now: now) } catch let rejection as TokenRejection {
            return try await reject(
                rejection, payload: body, as: { .notificationRejected($0) }, keyPrefix: "notification-rejected", gate: admitRejection)
        }
        let subject = Identifier(subKind, notification.sub)
        let erasing = notification.type == .accountDeleted && settings.onAccountDeleted == .erase
        var body = NotificationReceived(
            kind: NotificationReceived.Kind(notification.type), eventTime: Timestamp(notification.eventTime),
            isPrivateEmail: notification.isPrivateEmail)
        if let email = notification.email, !erasing, try !isErased(subject) {
            body.email = try await ledger.sealer.seal(email, for: subject)
        }
        var ids = Identifiers(jti: notification.jti)
        ids[subKind] = notification.sub
        let draft = EventDraft(
            .notificationReceived(body), identifiers: ids, occurredAt: Timestamp(notification.eventTime),
            idempotencyKey: EventDraft.notificationIdempotencyKey(jti: notification.jti))
        var receipt = try await record(draft)
        if erasing { receipt.erased = try await erase(subject, reason: "Apple reported the account deleted (notification \(notification.jti))") }
        return receipt
    }

    // MARK: Sign-ins

    /// Verifies and records one identity token reported by the app backend, with the nonce
    /// the backend issued for that sign-in if it has one. With `verifyAt`, `exp` and `iat` are
    /// checked against that time instead of `now` (a token captured earlier, backfilled), and
    /// the event records it as `verified_at`. `admitRejection` is as for notifications.
    /// `received` is the token's bytes as they arrived, if they may differ from its UTF-8 (a
    /// body that was not UTF-8): a refusal's payload hash is taken of them.
    public func receiveSignIn(
        _ token: String, nonce: String? = nil, verifyAt: Date? = nil, now: Date = Date(), received: Data? = nil,
        admitRejection: (@Sendable (_ payloadSHA256: String) -> Bool)? = nil
    ) async throws -> IntakeReceipt {
        let identity: IdentityToken
        do { identity = try await verifier.verifyIdentityToken(token, nonce: nonce, now: verifyAt ?? now) } catch let rejection as TokenRejection {
            return try await reject(
                rejection, payload: received ?? Data(token.utf8), as: { .signInRejected($0) }, keyPrefix: "sign-in-rejected", gate: admitRejection)
        }
        let subject = Identifier(subKind, identity.sub)
        var body = SignInVerified(
            audience: identity.audience, issuedAt: Timestamp(identity.issuedAt), expiresAt: Timestamp(identity.expiresAt),
            emailVerified: identity.emailVerified, isPrivateEmail: identity.isPrivateEmail,
            nonceChecked: identity.nonceChecked, realUserStatus: identity.realUserStatus,
            verifiedAt: verifyAt.map { Timestamp($0) })
        if let email = identity.email, !email.isEmpty, try !isErased(subject) {
            body.email = try await ledger.sealer.seal(email, for: subject)
        }
        var ids = Identifiers(transferSub: identity.transferSub)
        ids[subKind] = identity.sub
        let draft = EventDraft(
            .signInVerified(body), identifiers: ids, occurredAt: Timestamp(identity.issuedAt),
            idempotencyKey: "sign-in:" + AppleIntake.sha256(Data(token.utf8)))
        var receipt = try await record(draft)
        // Read after the append, which folded the sign-in: the backend learns which account this is.
        let asked = identity.transferSub.map { Identifier(.transferSub, $0) } ?? subject
        receipt.lookup = try lookup(asked)
        return receipt
    }

    /// What the projections know of the user `identifier` names (``UserLookup``); records nothing.
    public func lookup(_ identifier: Identifier) throws -> UserLookup {
        try projection.read(ledger) { snapshot, _ in try UserLookup(identifier, in: snapshot) }
    }

    // MARK: Recording

    private func record(_ draft: EventDraft) async throws -> IntakeReceipt {
        let started = ContinuousClock.now
        let outcome = try await ledger.append(draft)
        let duration = ContinuousClock.now - started
        switch outcome {
        case .recorded(let sequence, _):
            return IntakeReceipt(outcome: .recorded(sequence: sequence), eventType: draft.type, appendDuration: duration, erased: false)
        case .duplicate(let sequence):
            return IntakeReceipt(outcome: .duplicate(of: sequence), eventType: draft.type, appendDuration: duration, erased: false)
        }
    }

    private func reject(
        _ rejection: TokenRejection, payload: Data, as body: (TokenRejected) -> EventBody, keyPrefix: String,
        gate: (@Sendable (_ payloadSHA256: String) -> Bool)?
    ) async throws -> IntakeReceipt {
        let hash = AppleIntake.sha256(payload)
        let draft = EventDraft(
            body(TokenRejected(reason: rejection.reason.rawValue, detail: rejection.detail, payloadSHA256: hash)),
            idempotencyKey: keyPrefix + ":" + hash)
        if let gate, !gate(hash) {
            return IntakeReceipt(outcome: .suppressed(rejection, payloadSHA256: hash), eventType: draft.type, appendDuration: .zero, erased: false)
        }
        logger.info("refused", metadata: ["reason": "\(rejection.reason)", "detail": "\(rejection.detail)", "payload_sha256": "\(hash)"])
        var receipt = try await record(draft)
        receipt.outcome = .rejected(rejection, sequence: receipt.sequence)
        return receipt
    }

    private func isErased(_ subject: Identifier) throws -> Bool {
        try projection.read(ledger) { snapshot, _ in try snapshot.user(with: subject)?.erasedAt != nil }
    }

    /// Erases the user unless already erased; runs on redeliveries too, so a crash between
    /// recording the notification and erasing is finished by Apple's retry.
    private func erase(_ subject: Identifier, reason: String) async throws -> Bool {
        let result = try await UserEraser(ledger: ledger, projection: projection).erase(holding: subject, reason: reason)
        return result.map { !$0.alreadyErased } ?? false
    }

    static func sha256(_ data: Data) -> String {
        Hex.encode(SHA256.hash(data: data))
    }
}

extension NotificationReceived.Kind {
    init(_ type: AppleNotification.EventType) {
        switch type {
        case .emailEnabled: self = .emailEnabled
        case .emailDisabled: self = .emailDisabled
        case .consentRevoked: self = .consentRevoked
        case .accountDeleted: self = .accountDeleted
        }
    }
}
