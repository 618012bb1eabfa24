import Basics

/// Body of "transfer ID generated" (team A): Apple returned a `transfer_sub` for one user
/// and a target team. The user's identifiers are in the envelope.
public struct TransferIDGenerated: Hashable, Sendable {
    public var targetTeam: String

    public init(targetTeam: String) { self.targetTeam = targetTeam }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("target_team", targetTeam)
        w.endObject()
    }

    init(reading r: FieldReader) throws { self.init(targetTeam: try r.string("target_team")) }
}

/// Body of "transfer ID generation failed" (team A).
public struct TransferIDGenerationFailed: Hashable, Sendable {
    public var targetTeam: String
    public var failure: CallFailure

    public init(targetTeam: String, failure: CallFailure) {
        self.targetTeam = targetTeam
        self.failure = failure
    }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("failure", failure)
        w.field("target_team", targetTeam)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(targetTeam: try r.string("target_team"), failure: try CallFailure(reading: r.object("failure")))
    }
}

/// Body of "transfer ID exchanged" (team B): Apple returned the recipient `sub` (in the
/// envelope) and the private relay email, sealed.
public struct TransferIDExchanged: Hashable, Sendable {
    public var email: SealedValue?
    public var isPrivateEmail: Bool?

    public init(email: SealedValue?, isPrivateEmail: Bool?) {
        self.email = email
        self.isPrivateEmail = isPrivateEmail
    }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("email", email)
        w.field("is_private_email", isPrivateEmail)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(email: try r.optionalObject("email").map(SealedValue.init(reading:)), isPrivateEmail: try r.optionalBool("is_private_email"))
    }
}

/// Body of "transfer ID exchange failed" (team B).
public struct TransferIDExchangeFailed: Hashable, Sendable {
    public var failure: CallFailure

    public init(failure: CallFailure) { self.failure = failure }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("failure", failure)
        w.endObject()
    }

    init(reading r: FieldReader) throws { self.init(failure: try CallFailure(reading: r.object("failure"))) }
}
