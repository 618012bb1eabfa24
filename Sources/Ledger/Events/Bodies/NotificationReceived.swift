import Basics

/// Body of "notification received": a verified server-to-server notification from Apple.
/// Its `jti` and `sub` are in the envelope; `event_time` is the event's occurred time too.
public struct NotificationReceived: Hashable, Sendable {
    /// The kinds of notification Apple sends.
    public enum Kind: String, Sendable, CaseIterable {
        case emailEnabled = "email-enabled"
        case emailDisabled = "email-disabled"
        case consentRevoked = "consent-revoked"
        case accountDeleted = "account-deleted"
    }

    public var kind: Kind
    public var eventTime: Timestamp
    public var email: SealedValue?
    public var isPrivateEmail: Bool?

    public init(kind: Kind, eventTime: Timestamp, email: SealedValue? = nil, isPrivateEmail: Bool? = nil) {
        self.kind = kind
        self.eventTime = eventTime
        self.email = email
        self.isPrivateEmail = isPrivateEmail
    }
}

extension NotificationReceived: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            kind: try c.field("notification_type", v?.kind), eventTime: try c.field("event_time", v?.eventTime),
            email: try c.optional("email", v?.email), isPrivateEmail: try c.optional("is_private_email", v?.isPrivateEmail))
    }
}

extension NotificationReceived.Kind: FieldEnumeration {}
