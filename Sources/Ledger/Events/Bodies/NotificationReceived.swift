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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("email", email)
        w.field("event_time", eventTime)
        w.field("is_private_email", isPrivateEmail)
        w.field("notification_type", kind.rawValue)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            kind: try r.enumeration("notification_type", Kind.self), eventTime: try r.timestamp("event_time"),
            email: try r.optionalObject("email").map(SealedValue.init(reading:)), isPrivateEmail: try r.optionalBool("is_private_email"))
    }
}
