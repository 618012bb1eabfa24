/// Why an identity token or a notification was refused: a stable reason code callers can
/// match and record, and details for people. Never contains the token itself.
public struct TokenRejection: Error, Sendable, CustomStringConvertible {
    /// A stable reason code, recorded in "sign-in rejected" and "notification rejected".
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The body is larger than the limit (64 KiB).
        public static let bodyTooLarge = Reason(rawValue: "body-too-large")
        /// The body is not the expected JSON (`{"payload": "..."}` for notifications).
        public static let malformedBody = Reason(rawValue: "malformed-body")
        /// The token is not three dot-separated parts.
        public static let malformedJWS = Reason(rawValue: "malformed-jws")
        /// A part of the token is not base64url.
        public static let malformedBase64 = Reason(rawValue: "malformed-base64")
        /// The header or payload is not a JSON object.
        public static let malformedJSON = Reason(rawValue: "malformed-json")
        /// `alg` is `none`: an unsigned token.
        public static let algorithmNone = Reason(rawValue: "alg-none")
        /// `alg` is something other than RS256 (HS256 keyed with the public key, for example).
        public static let algorithmNotAllowed = Reason(rawValue: "alg-not-allowed")
        /// The header names no `kid`.
        public static let missingKeyID = Reason(rawValue: "missing-kid")
        /// No key in Apple's key set has the header's `kid`.
        public static let unknownKeyID = Reason(rawValue: "unknown-kid")
        /// The RS256 signature does not verify with the named key.
        public static let badSignature = Reason(rawValue: "bad-signature")
        /// `exp` has passed (beyond the leeway).
        public static let expired = Reason(rawValue: "expired")
        /// `iat` is in the future (beyond the leeway).
        public static let issuedInFuture = Reason(rawValue: "issued-in-future")
        /// `iss` is not `https://appleid.apple.com`.
        public static let wrongIssuer = Reason(rawValue: "wrong-issuer")
        /// `aud` is none of this ledger's client IDs.
        public static let wrongAudience = Reason(rawValue: "wrong-audience")
        /// A required claim is absent.
        public static let missingClaim = Reason(rawValue: "missing-claim")
        /// A claim has the wrong type or an unusable value.
        public static let invalidClaim = Reason(rawValue: "invalid-claim")
        /// The caller passed a nonce the token lacks or contradicts.
        public static let nonceMismatch = Reason(rawValue: "nonce-mismatch")
        /// The notification's event type is none Apple documents.
        public static let unknownEventType = Reason(rawValue: "unknown-event-type")

        /// Every reason, for metrics and documentation.
        public static let all: [Reason] = [
            .bodyTooLarge, .malformedBody, .malformedJWS, .malformedBase64, .malformedJSON, .algorithmNone, .algorithmNotAllowed,
            .missingKeyID, .unknownKeyID, .badSignature, .expired, .issuedInFuture, .wrongIssuer, .wrongAudience, .missingClaim,
            .invalidClaim, .nonceMismatch, .unknownEventType,
        ]
    }

    public var reason: Reason
    /// What exactly was wrong, for people.
    public var detail: String

    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    public var description: String { "\(reason.rawValue): \(detail)" }

    /// A value the token carried, quoted for a detail: its first `limit` Unicode scalars (so at
    /// most four bytes each, whatever the value holds), with `…` when cut. The detail keeps it
    /// as received; whatever shows the detail escapes it.
    public static func quote(_ value: String, limit: Int = 64) -> String {
        let scalars = value.unicodeScalars
        guard scalars.count > limit else { return "\"" + value + "\"" }
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: scalars.prefix(limit))
        return "\"" + String(cut) + "\"…"
    }
}
