import Foundation

/// A verified server-to-server notification from Apple about one user.
public struct AppleNotification: Sendable, Hashable {
    /// The kinds of notification Apple sends.
    public enum EventType: String, Sendable, CaseIterable {
        case emailEnabled = "email-enabled"
        case emailDisabled = "email-disabled"
        case consentRevoked = "consent-revoked"
        case accountDeleted = "account-deleted"

        /// Reads Apple's spelling, including the older `account-delete`.
        public init?(apple text: String) {
            if text == "account-delete" { self = .accountDeleted } else { self.init(rawValue: text) }
        }
    }

    /// The notification's unique ID; a redelivery carries the same one.
    public var jti: String
    /// The client ID it is for.
    public var audience: String
    public var issuedAt: Date
    public var type: EventType
    /// The user's `sub` for the receiving team.
    public var sub: String
    public var email: String?
    public var isPrivateEmail: Bool?
    /// When the change happened, by Apple's clock.
    public var eventTime: Date
}
