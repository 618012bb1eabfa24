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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("client_id", clientID)
        w.field("expires_at", expiresAt)
        w.field("fingerprint", fingerprint)
        w.field("key_id", keyID)
        w.field("scope", scope)
        w.field("team_id", teamID)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            teamID: try r.string("team_id"), clientID: try r.string("client_id"), keyID: try r.optionalString("key_id"),
            scope: try r.string("scope"), expiresAt: try r.timestamp("expires_at"), fingerprint: try r.string("fingerprint"))
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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("client_id", clientID)
        w.field("failure", failure)
        w.field("key_id", keyID)
        w.field("scope", scope)
        w.field("team_id", teamID)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            teamID: try r.string("team_id"), clientID: try r.string("client_id"), keyID: try r.optionalString("key_id"),
            scope: try r.string("scope"), failure: try CallFailure(reading: r.object("failure")))
    }
}
