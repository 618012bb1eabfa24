import Foundation

/// What Apple returned for one exchanged transfer identifier.
public struct MigratedUser: Sendable, Hashable {
    /// The recipient team's `sub`.
    public var sub: String
    /// The private relay (or shared) email, when Apple returned one.
    public var email: String?
    public var isPrivateEmail: Bool?

    public init(sub: String, email: String?, isPrivateEmail: Bool?) {
        self.sub = sub
        self.email = email
        self.isPrivateEmail = isPrivateEmail
    }
}
