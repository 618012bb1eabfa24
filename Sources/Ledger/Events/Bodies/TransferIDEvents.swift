import Basics

/// Body of "transfer ID generated" (team A): Apple returned a `transfer_sub` for one user
/// and a target team. The user's identifiers are in the envelope.
public struct TransferIDGenerated: Hashable, Sendable {
    public var targetTeam: String

    public init(targetTeam: String) { self.targetTeam = targetTeam }
}

/// Body of "transfer ID generation failed" (team A).
public struct TransferIDGenerationFailed: Hashable, Sendable {
    public var targetTeam: String
    public var failure: CallFailure

    public init(targetTeam: String, failure: CallFailure) {
        self.targetTeam = targetTeam
        self.failure = failure
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
}

/// Body of "transfer ID exchange failed" (team B).
public struct TransferIDExchangeFailed: Hashable, Sendable {
    public var failure: CallFailure

    public init(failure: CallFailure) { self.failure = failure }
}

extension TransferIDGenerated: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self { Self(targetTeam: try c.field("target_team", v?.targetTeam)) }
}

extension TransferIDGenerationFailed: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(targetTeam: try c.field("target_team", v?.targetTeam), failure: try c.field("failure", v?.failure))
    }
}

extension TransferIDExchanged: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(email: try c.optional("email", v?.email), isPrivateEmail: try c.optional("is_private_email", v?.isPrivateEmail))
    }
}

extension TransferIDExchangeFailed: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self { Self(failure: try c.field("failure", v?.failure)) }
}
