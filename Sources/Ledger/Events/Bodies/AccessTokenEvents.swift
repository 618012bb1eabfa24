import Basics

/// Body of "access token issued": a `user.migration` token was obtained. The token itself
/// is never recorded, only a fingerprint.
public struct AccessTokenIssued: Hashable, Sendable {
    public var teamID: String
    public var clientID: String
    public var keyID: String?
    public var scope: String
    public var expiresAt: Timestamp
    /// The first 16 hex digits of the token's SHA-256.
    public var fingerprint: String

    public init(teamID: String, clientID: String, keyID: String? = nil, scope: String = "user.migration", expiresAt: Timestamp, fingerprint: String) {
        self.teamID = teamID
        self.clientID = clientID
        self.keyID = keyID
        self.scope = scope
        self.expiresAt = expiresAt
        self.fingerprint = fingerprint
    }
}

/// Body of "access token failed": the token endpoint refused or could not be reached.
public struct AccessTokenFailed: Hashable, Sendable {
    public var teamID: String
    public var clientID: String
    public var keyID: String?
    public var scope: String
    public var failure: CallFailure

    public init(teamID: String, clientID: String, keyID: String? = nil, scope: String = "user.migration", failure: CallFailure) {
        self.teamID = teamID
        self.clientID = clientID
        self.keyID = keyID
        self.scope = scope
        self.failure = failure
    }
}

extension AccessTokenIssued: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            teamID: try c.field("team_id", v?.teamID), clientID: try c.field("client_id", v?.clientID), keyID: try c.optional("key_id", v?.keyID),
            scope: try c.field("scope", v?.scope), expiresAt: try c.field("expires_at", v?.expiresAt),
            fingerprint: try c.field("fingerprint", v?.fingerprint))
    }
}

extension AccessTokenFailed: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            teamID: try c.field("team_id", v?.teamID), clientID: try c.field("client_id", v?.clientID), keyID: try c.optional("key_id", v?.keyID),
            scope: try c.field("scope", v?.scope), failure: try c.field("failure", v?.failure))
    }
}
