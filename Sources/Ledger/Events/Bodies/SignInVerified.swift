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
}

extension SignInVerified: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            audience: try c.field("audience", v?.audience), issuedAt: try c.field("issued_at", v?.issuedAt),
            expiresAt: try c.field("expires_at", v?.expiresAt), email: try c.optional("email", v?.email),
            emailVerified: try c.optional("email_verified", v?.emailVerified), isPrivateEmail: try c.optional("is_private_email", v?.isPrivateEmail),
            nonceChecked: try c.optional("nonce_checked", v?.nonceChecked), realUserStatus: try c.optional("real_user_status", v?.realUserStatus),
            verifiedAt: try c.optional("verified_at", v?.verifiedAt))
    }
}
