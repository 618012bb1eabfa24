import Basics

/// Body of "sign-in verified": an identity token whose signature and claims checked out.
/// Its `sub` and `transfer_sub` are in the envelope; `iat` is the event's occurred time.
public struct SignInVerified: Hashable, Sendable {
    public var audience: String
    public var issuedAt: Timestamp
    public var expiresAt: Timestamp
    public var email: SealedValue?
    public var emailVerified: Bool?
    public var isPrivateEmail: Bool?
    /// Whether a nonce was required and matched.
    public var nonceChecked: Bool?
    /// Apple's `real_user_status` (0 unsupported, 1 unknown, 2 likely real).
    public var realUserStatus: Int?
    /// The time `exp` and `iat` were checked against, when it was not the time of recording:
    /// a token captured earlier and backfilled with `ingest sign-in --verify-at`. The event's
    /// own `recorded_at` says when it was ingested.
    public var verifiedAt: Timestamp?

    public init(
        audience: String, issuedAt: Timestamp, expiresAt: Timestamp, email: SealedValue? = nil, emailVerified: Bool? = nil,
        isPrivateEmail: Bool? = nil, nonceChecked: Bool? = nil, realUserStatus: Int? = nil, verifiedAt: Timestamp? = nil
    ) {
        self.audience = audience
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.nonceChecked = nonceChecked
        self.realUserStatus = realUserStatus
        self.verifiedAt = verifiedAt
    }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("audience", audience)
        w.field("email", email)
        w.field("email_verified", emailVerified)
        w.field("expires_at", expiresAt)
        w.field("is_private_email", isPrivateEmail)
        w.field("issued_at", issuedAt)
        w.field("nonce_checked", nonceChecked)
        w.field("real_user_status", realUserStatus)
        w.field("verified_at", verifiedAt)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            audience: try r.string("audience"), issuedAt: try r.timestamp("issued_at"), expiresAt: try r.timestamp("expires_at"),
            email: try r.optionalObject("email").map(SealedValue.init(reading:)), emailVerified: try r.optionalBool("email_verified"),
            isPrivateEmail: try r.optionalBool("is_private_email"), nonceChecked: try r.optionalBool("nonce_checked"),
            realUserStatus: try r.optionalInt("real_user_status"), verifiedAt: try r.optionalTimestamp("verified_at"))
    }
}
