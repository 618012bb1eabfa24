import Foundation

/// A verified Sign in with Apple identity token: the claims Handover records.
public struct IdentityToken: Sendable, Hashable {
    /// The user's `sub` for the team the token's audience belongs to.
    public var sub: String
    /// During a transfer window, the user's `transfer_sub`: it joins the new `sub` to the old team's user.
    public var transferSub: String?
    /// The client ID the token is for (one of the ledger's).
    public var audience: String
    public var issuedAt: Date
    public var expiresAt: Date
    public var email: String?
    public var emailVerified: Bool?
    public var isPrivateEmail: Bool?
    /// `real_user_status`: 0 unsupported, 1 unknown, 2 likely real.
    public var realUserStatus: Int?
    /// Whether the caller's nonce was required and matched; nil when the caller passed none.
    public var nonceChecked: Bool?
}
