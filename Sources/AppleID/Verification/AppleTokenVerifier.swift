import Basics
import Foundation

/// Verifies what Apple signs: identity tokens and server-to-server notifications.
///
/// RS256 only, with the key the header's `kid` names in Apple's key set; `iss` must be
/// Apple's, `aud` one of the app's client IDs, `exp` and `iat` within a leeway of at most
/// 60 seconds. Every refusal is a ``TokenRejection`` with a precise reason; when Apple's
/// keys cannot be had, ``AppleKeySet/Unavailable`` is thrown instead (the token may be fine).
public struct AppleTokenVerifier: Sendable {
    /// The `iss` of everything Apple signs.
    public static let issuer = "https://appleid.apple.com"
    /// The largest notification body accepted, in bytes.
    public static let maximumBodySize = 64 * 1024
    /// The longest `sub`, `transfer_sub` or `jti` accepted, in UTF-8 bytes: the ledger's own
    /// limit (`Identifiers.maximumLength`), so a token is refused whole rather than recorded in part.
    public static let maximumIdentifierLength = 400

    public let keys: AppleKeySet
    /// The client IDs tokens may be addressed to.
    public let audiences: Set<String>
    /// Clock skew allowed on `exp` and `iat`, in seconds (0 to 60).
    public let leeway: Int64

    public init(keys: AppleKeySet, audiences: some Sequence<String>, leeway: Int64 = 60) {
        self.keys = keys
        self.audiences = Set(audiences)
        self.leeway = min(max(leeway, 0), 60)
    }

    /// Verifies an identity token. With `nonce`, the token must carry the same nonce, or
    /// lack one only where Apple says nonces are unsupported (`nonce_supported` false).
    public func verifyIdentityToken(_ token: String, nonce: String? = nil, now: Date = Date()) async throws -> IdentityToken {
        guard token.utf8.count <= AppleTokenVerifier.maximumBodySize else {
            throw TokenRejection(.bodyTooLarge, "the token is larger than \(AppleTokenVerifier.maximumBodySize) bytes")
        }
        let (claims, audience) = try await verified(token, as: IdentityTokenClaims.self, now: now, requireExpiry: true)
        let sub = try identifier(claims.sub, "sub")
        let transferSub = try claims.transferSub.isAbsent ? nil : identifier(claims.transferSub, "transfer_sub")
        let nonceChecked = try nonceChecked(claims, against: nonce)
        let realUserStatus = try claims.realUserStatus.optional("real_user_status")?.value
        if let realUserStatus, !(0...2).contains(realUserStatus) {
            throw TokenRejection(.invalidClaim, "real_user_status is \(realUserStatus), expected 0, 1 or 2")
        }
        return IdentityToken(
            sub: sub, transferSub: transferSub, audience: audience, issuedAt: try claims.iat.required("iat").date,
            expiresAt: try claims.exp.required("exp").date, email: try claims.email.optional("email"),
            emailVerified: try claims.emailVerified.optional("email_verified"),
            isPrivateEmail: try claims.isPrivateEmail.optional("is_private_email"), realUserStatus: realUserStatus, nonceChecked: nonceChecked)
    }

    /// Whether the caller's `nonce` was required and matched; nil when the caller passed none.
    private func nonceChecked(_ claims: IdentityTokenClaims, against nonce: String?) throws(TokenRejection) -> Bool? {
        guard let nonce else { return nil }
        if let tokenNonce = try claims.nonce.optional("nonce") {
            guard tokenNonce == nonce else { throw TokenRejection(.nonceMismatch, "the token's nonce is not the one the caller passed") }
            return true
        }
        guard try claims.nonceSupported.optional("nonce_supported") == false else {
            throw TokenRejection(.nonceMismatch, "the caller passed a nonce, the token has none and does not say nonce_supported false")
        }
        return false
    }

    /// Verifies a notification as Apple POSTs it: the body `{"payload": "<JWS>"}`.
    public func verifyNotification(body: Data, now: Date = Date()) async throws -> AppleNotification {
        guard body.count <= AppleTokenVerifier.maximumBodySize else {
            throw TokenRejection(.bodyTooLarge, "the body is larger than \(AppleTokenVerifier.maximumBodySize) bytes")
        }
        let object: [String: JSONValue]
        do { object = try JSONValue.parseObject(untrusted: Array(body)) } catch {
            throw TokenRejection(.malformedBody, "the body is not a JSON object (\(error))")
        }
        guard let payload = object["payload"]?.stringValue else {
            throw TokenRejection(.malformedBody, "the body has no \"payload\" string")
        }
        return try await verifyNotificationPayload(payload, now: now)
    }

    /// Verifies a notification's signed payload (the JWS itself).
    public func verifyNotificationPayload(_ payload: String, now: Date = Date()) async throws -> AppleNotification {
        let (claims, audience) = try await verified(payload, as: NotificationClaims.self, now: now, requireExpiry: false)
        let jti = try identifier(claims.jti, "jti")
        let event = try eventClaims(claims.events.required("events"))
        let typeName = try event.type.required("events.type")
        guard let type = AppleNotification.EventType(apple: typeName) else {
            throw TokenRejection(
                .unknownEventType,
                "events.type is \(TokenRejection.quote(typeName)), not one of \(AppleNotification.EventType.allCases.map(\.rawValue).joined(separator: ", ")) or account-delete"
            )
        }
        return AppleNotification(
            jti: jti, audience: audience, issuedAt: try claims.iat.required("iat").date, type: type, sub: try identifier(event.sub, "events.sub"),
            email: try event.email.optional("events.email"), isPrivateEmail: try event.isPrivateEmail.optional("events.is_private_email"),
            eventTime: try event.eventTime.required("events.event_time").date)
    }

    /// The event of a notification, its `events` claim read as an object when sent as a string.
    private func eventClaims(_ events: NotificationClaims.Events) throws(TokenRejection) -> NotificationEventClaims {
        switch events {
        case .object(let object):
            return object
        case .text(let text):
            do {
                _ = try JSONValue.parseObject(untrusted: Array(text.utf8))
                return try JSONDecoder().decode(NotificationEventClaims.self, from: Data(text.utf8))
            } catch {
                throw TokenRejection(.malformedJSON, "the events claim is a string that is not a JSON object (\(error))")
            }
        }
    }

    /// Checks structure, algorithm and key (``TokenPrecheck``), the signature (jwt-kit), then
    /// issuer, audience and times; returns the claims and the audience they matched.
    private func verified<Claims: AppleClaims>(
        _ token: String, as type: Claims.Type, now: Date, requireExpiry: Bool
    ) async throws -> (Claims, audience: String) {
        let checked = try TokenPrecheck(token)
        guard let keySet = try await keys.keys(holding: checked.keyID) else {
            throw TokenRejection(.unknownKeyID, "no key \(TokenRejection.quote(checked.keyID)) in Apple's key set")
        }
        let claims: Claims
        do { claims = try await keySet.verify(checked, as: type) } catch {
            throw TokenRejection(jwtKit: error, keyID: checked.keyID)
        }
        let iss = try claims.iss.required("iss")
        guard iss == AppleTokenVerifier.issuer else {
            throw TokenRejection(.wrongIssuer, "iss is \(TokenRejection.quote(iss)), expected \(AppleTokenVerifier.issuer)")
        }
        let offered = try claims.aud.required("aud").values
        guard let audience = offered.first(where: audiences.contains) else {
            let shown =
                offered.prefix(4).map { TokenRejection.quote($0) }.joined(separator: ", ")
                + (offered.count > 4 ? " and \(offered.count - 4) more" : "")
            throw TokenRejection(.wrongAudience, "aud \(shown) is not among this ledger's client IDs (\(audiences.sorted().joined(separator: ", ")))")
        }
        let nowSeconds = Int64(now.timeIntervalSince1970.rounded(.down))
        let exp = requireExpiry ? try claims.exp.required("exp") : try claims.exp.optional("exp")
        if let exp = exp?.seconds, nowSeconds > exp + leeway {
            throw TokenRejection(.expired, "exp \(Date(seconds: exp).rfc3339) is \(nowSeconds - exp) s ago (leeway \(leeway) s)")
        }
        let iat = try claims.iat.required("iat").seconds
        guard iat <= nowSeconds + leeway else {
            throw TokenRejection(.issuedInFuture, "iat \(Date(seconds: iat).rfc3339) is \(iat - nowSeconds) s in the future (leeway \(leeway) s)")
        }
        return (claims, audience)
    }

    /// A `sub`, `transfer_sub` or `jti`: a string the ledger can record whole.
    private func identifier(_ claim: Claim<String>, _ name: String) throws(TokenRejection) -> String {
        let value = try claim.required(name)
        guard !value.isEmpty, value.utf8.count <= AppleTokenVerifier.maximumIdentifierLength, !value.utf8.contains(0) else {
            throw TokenRejection(
                .invalidClaim, "\(name) is empty, contains NUL or is longer than \(AppleTokenVerifier.maximumIdentifierLength) bytes")
        }
        return value
    }
}
