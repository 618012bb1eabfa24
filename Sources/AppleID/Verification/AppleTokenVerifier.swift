import Crypto
import CryptoExtras
import Foundation
import Ledger

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
        let (claims, audience) = try await verifiedClaims(token, now: now, requireExpiry: true)
        let sub = try identifier(claims, "sub")
        let transferSub = try claims.has("transfer_sub") ? identifier(claims, "transfer_sub") : nil
        var nonceChecked: Bool?
        if let nonce {
            if let tokenNonce = try claims.optionalString("nonce") {
                guard tokenNonce == nonce else { throw TokenRejection(.nonceMismatch, "the token's nonce is not the one the caller passed") }
                nonceChecked = true
            } else if try claims.optionalBool("nonce_supported") ?? true {
                throw TokenRejection(.nonceMismatch, "the caller passed a nonce, the token has none and does not say nonce_supported false")
            } else {
                nonceChecked = false
            }
        }
        let realUserStatus = try claims.optionalInt("real_user_status")
        if let realUserStatus, !(0...2).contains(realUserStatus) {
            throw TokenRejection(.invalidClaim, "real_user_status is \(realUserStatus), expected 0, 1 or 2")
        }
        return IdentityToken(
            sub: sub, transferSub: transferSub, audience: audience, issuedAt: Date(seconds: try claims.seconds("iat")),
            expiresAt: Date(seconds: try claims.seconds("exp")), email: try claims.optionalString("email"),
            emailVerified: try claims.optionalBool("email_verified"), isPrivateEmail: try claims.optionalBool("is_private_email"),
            realUserStatus: realUserStatus, nonceChecked: nonceChecked)
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
        let (claims, audience) = try await verifiedClaims(payload, now: now, requireExpiry: false)
        let jti = try identifier(claims, "jti")
        let event = ClaimSet(try events(in: claims), path: "events.")
        let typeName = try event.string("type")
        guard let type = AppleNotification.EventType(apple: typeName) else {
            throw TokenRejection(
                .unknownEventType,
                "events.type is \(TokenRejection.quote(typeName)), not one of \(AppleNotification.EventType.allCases.map(\.rawValue).joined(separator: ", ")) or account-delete"
            )
        }
        let eventTime = try event.eventTime("event_time")
        return AppleNotification(
            jti: jti, audience: audience, issuedAt: Date(seconds: try claims.seconds("iat")), type: type, sub: try identifier(event, "sub"),
            email: try event.optionalString("email"), isPrivateEmail: try event.optionalBool("is_private_email"), eventTime: eventTime)
    }

    /// The `events` claim, which real deliveries send as a JSON-encoded string and Apple's
    /// page shows as an object.
    private func events(in claims: ClaimSet) throws -> [String: JSONValue] {
        switch claims.values["events"] {
        case nil, .null?:
            throw TokenRejection(.missingClaim, "the token has no events claim")
        case .object(let object)?:
            return object
        case .string(let text)?:
            do { return try JSONValue.parseObject(untrusted: Array(text.utf8)) } catch {
                throw TokenRejection(.malformedJSON, "the events claim is a string that is not a JSON object (\(error))")
            }
        default:
            throw TokenRejection(.invalidClaim, "the events claim is neither an object nor a JSON string")
        }
    }

    /// Checks structure, algorithm, key, signature, issuer, audience and times; returns the
    /// claims and the audience they matched.
    private func verifiedClaims(_ token: String, now: Date, requireExpiry: Bool) async throws -> (ClaimSet, String) {
        let jws: CompactJWS
        do { jws = try CompactJWS(token.trimming(.whitespacesAndNewlines)) } catch let error as CompactJWS.Malformed {
            switch error.problem {
            case .structure: throw TokenRejection(.malformedJWS, error.description)
            case .base64: throw TokenRejection(.malformedBase64, error.description)
            case .json: throw TokenRejection(.malformedJSON, error.description)
            }
        }
        let alg = jws.header["alg"]?.stringValue
        switch alg {
        case "RS256": break
        case nil: throw TokenRejection(.algorithmNotAllowed, "the header has no alg; Apple signs with RS256")
        case let other? where other.lowercased() == "none":
            throw TokenRejection(.algorithmNone, "alg is \(TokenRejection.quote(other)): an unsigned token")
        case let other?:
            throw TokenRejection(
                .algorithmNotAllowed,
                "alg is \(TokenRejection.quote(other, limit: 16)); only RS256 is accepted (Apple signs with RS256; an HMAC alg would be keyed with a public key)"
            )
        }
        guard let kid = jws.header["kid"]?.stringValue, !kid.isEmpty else { throw TokenRejection(.missingKeyID, "the header has no kid") }
        guard let key = try await keys.key(for: kid) else {
            throw TokenRejection(.unknownKeyID, "no key \(TokenRejection.quote(kid)) in Apple's key set")
        }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: jws.signature)
        guard key.isValidSignature(signature, for: SHA256.hash(data: Data(jws.signingInput.utf8)), padding: .insecurePKCS1v1_5) else {
            throw TokenRejection(.badSignature, "the RS256 signature does not verify with key \(TokenRejection.quote(kid))")
        }
        let claims = ClaimSet(jws.claims)
        let iss = try claims.string("iss")
        guard iss == AppleTokenVerifier.issuer else {
            throw TokenRejection(.wrongIssuer, "iss is \(TokenRejection.quote(iss)), expected \(AppleTokenVerifier.issuer)")
        }
        let offered = try claims.audiences()
        guard let audience = offered.first(where: audiences.contains) else {
            let shown =
                offered.prefix(4).map { TokenRejection.quote($0) }.joined(separator: ", ")
                + (offered.count > 4 ? " and \(offered.count - 4) more" : "")
            throw TokenRejection(.wrongAudience, "aud \(shown) is not among this ledger's client IDs (\(audiences.sorted().joined(separator: ", ")))")
        }
        let nowSeconds = Int64(now.timeIntervalSince1970.rounded(.down))
        let exp = requireExpiry ? try claims.seconds("exp") : try claims.optionalSeconds("exp")
        if let exp, nowSeconds > exp + leeway {
            throw TokenRejection(.expired, "exp \(Date(seconds: exp).rfc3339) is \(nowSeconds - exp) s ago (leeway \(leeway) s)")
        }
        let iat = try claims.seconds("iat")
        guard iat <= nowSeconds + leeway else {
            throw TokenRejection(.issuedInFuture, "iat \(Date(seconds: iat).rfc3339) is \(iat - nowSeconds) s in the future (leeway \(leeway) s)")
        }
        return (claims, audience)
    }

    private func identifier(_ claims: ClaimSet, _ name: String) throws(TokenRejection) -> String {
        let value = try claims.string(name)
        guard !value.isEmpty, value.utf8.count <= AppleTokenVerifier.maximumIdentifierLength, !value.utf8.contains(0) else {
            throw TokenRejection(
                .invalidClaim, "\(claims.path)\(name) is empty, contains NUL or is longer than \(AppleTokenVerifier.maximumIdentifierLength) bytes")
        }
        return value
    }
}

extension Date {
    init(seconds: Int64) { self.init(timeIntervalSince1970: TimeInterval(seconds)) }

    var rfc3339: String { ISO8601DateFormatter().string(from: self) }
}
