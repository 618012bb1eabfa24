import AppleID
import Basics
import Crypto
import Foundation
import JWTKit
import Ledger
import Synchronization

/// Apple's rules for the migration endpoints, as the stand-in applies them: client secrets
/// checked against registered team keys, self-validating access tokens, deterministic
/// `transfer_sub` and recipient `sub`, revoked consent, and the 60-day window.
public final class SimulatedApple: Sendable {
    /// A refusal: the HTTP status and TN3107 error code Apple would send.
    public struct Refusal: Error, Sendable, Equatable {
        public let status: Int
        public let error: String
        public let description: String
    }

    /// Stand-in behaviour that is not fault injection.
    public struct Rules: Sendable {
        /// Lifetime of access tokens it issues, seconds (Apple's is 3600).
        public var tokenLifetime = 3600
        /// Fraction of users (by a hash of their identifier) who revoked consent.
        public var revokedFraction = 0.0
        /// Chooses the users within ``revokedFraction`` by a hash of the seed and their
        /// identifier (``FaultSeed``); nil chooses them by the directory's secret.
        public var seed: FaultSeed?
        public init() {}
    }

    private struct Client: Sendable {
        let team: SimulatorDirectory.Team
        let publicKey: P256.Signing.PublicKey
    }

    private let secret: SymmetricKey
    private let clients: [String: Client]
    private let transfers: [SimulatorDirectory.Transfer]
    private let revoked: Set<String>
    public let rules: Rules
    /// Client secrets already verified, with their `exp`: verifying ES256 once per secret.
    private let verified = Mutex<[String: (teamID: String, exp: Int64)]>([:])
    /// The `exp` of the last access token issued: each token's is later than the one before.
    private let lastTokenExpiry = Mutex<Int64>(0)

    public init(directory: SimulatorDirectory, rules: Rules) throws {
        self.secret = try directory.secret()
        var clients: [String: Client] = [:]
        for team in try directory.teams().values {
            clients[team.teamID] = Client(team: team, publicKey: try P256.Signing.PublicKey(pemRepresentation: team.publicKeyPEM))
        }
        self.clients = clients
        self.transfers = try directory.transfers()
        self.revoked = directory.revoked()
        self.rules = rules
    }

    // MARK: Client secrets

    /// The team whose client secret this is, or `invalid_client` with the reason.
    public func authenticate(clientID: String?, clientSecret: String?, now: Int64) async throws(Refusal) -> SimulatorDirectory.Team {
        guard let clientID, !clientID.isEmpty else { throw invalidClient("client_id is missing") }
        guard let clientSecret, !clientSecret.isEmpty else { throw invalidClient("client_secret is missing") }
        if let known = verified.withLock({ $0[clientSecret] }), known.exp > now, let client = clients[known.teamID] {
            guard client.team.clientIDs.contains(clientID) else { throw invalidClient("client_id does not match the secret's sub") }
            return client.team
        }
        let parsed: (header: JWTHeader, payload: ClientSecretClaims, signature: Data)
        do { parsed = try DefaultJWTParser().parse(Array(clientSecret.utf8), as: ClientSecretClaims.self) } catch {
            throw invalidClient("client_secret is not a JWT: \(error)")
        }
        let claims = parsed.payload
        guard parsed.header.alg == "ES256" else { throw invalidClient("client_secret alg must be ES256") }
        guard let client = clients[claims.iss] else { throw invalidClient("iss names no registered team") }
        guard parsed.header.kid == client.team.keyID else { throw invalidClient("kid is not the team's key ID") }
        guard parsed.signature.count == 64 else {
            throw invalidClient("the signature is \(parsed.signature.count) bytes; ES256 needs raw R||S (64 bytes), not DER")
        }
        do { _ = try await ClientSecret.verifiedClaims(clientSecret, publicKey: client.publicKey) } catch {
            throw invalidClient("the signature does not verify with the team's key")
        }
        guard claims.aud == ClientSecretSigner.audience else { throw invalidClient("aud must be \(ClientSecretSigner.audience)") }
        guard claims.sub == clientID else { throw invalidClient("sub must equal client_id") }
        guard client.team.clientIDs.contains(clientID) else { throw invalidClient("client_id is not one of the team's") }
        guard claims.exp > now else { throw invalidClient("the client secret has expired") }
        guard claims.iat <= now + 60 else { throw invalidClient("iat is in the future") }
        guard claims.exp - claims.iat <= ClientSecretSigner.maximumLifetime else { throw invalidClient("exp is more than 15,777,000 s after iat") }
        verified.withLock { cache in
            if cache.count > 10_000 { cache.removeAll() }
            cache[clientSecret] = (claims.iss, claims.exp)
        }
        return client.team
    }

    // MARK: Access tokens

    /// A new access token for `teamID` and `clientID`: `nonce.team.client.exp.mac`, `exp`
    /// in milliseconds so short test lifetimes are exact.
    public func issueToken(teamID: String, clientID: String) -> (token: String, lifetime: Int) {
        let exp = lastTokenExpiry.withLock { last in
            last = max(Int64(Date().timeIntervalSince1970 * 1000) + Int64(rules.tokenLifetime) * 1000, last + 1)
            return last
        }
        let nonce = Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255) })
        let body = "\(nonce).\(teamID).\(Base64URL.encode(Data(clientID.utf8))).\(exp)"
        return (body + "." + mac("token", body, length: 16), rules.tokenLifetime)
    }

    /// The `exp` (milliseconds since 1970) of the last access token issued; every token issued
    /// later expires later.
    public var lastIssuedTokenExpiry: Int64 { lastTokenExpiry.withLock { $0 } }

    /// The team and client an access token belongs to and when it expires (milliseconds since
    /// 1970), or why it is refused (HTTP 401).
    public func checkToken(_ authorization: String?) throws(Refusal) -> (teamID: String, clientID: String, expiresAt: Int64) {
        guard let authorization, authorization.hasPrefix("Bearer ") else {
            throw Refusal(status: 401, error: "invalid_token", description: "Authorization: Bearer is missing")
        }
        let token = String(authorization.dropFirst(7))
        let parts = token.split(separator: ".")
        guard parts.count == 5, mac("token", parts[0...3].joined(separator: "."), length: 16) == parts[4],
            let clientData = Base64URL.decode(parts[2]), let exp = Int64(parts[3])
        else {
            throw Refusal(status: 401, error: "invalid_token", description: "the access token is not one this server issued")
        }
        guard exp > Int64(Date().timeIntervalSince1970 * 1000) else {
            throw Refusal(status: 401, error: "invalid_token", description: "the access token has expired")
        }
        return (String(parts[1]), String(decoding: clientData, as: UTF8.self), exp)
    }

    // MARK: Migration

    /// Whether the migration endpoints are closed for `teamID`'s app `clientID` at `now`.
    public func windowClosed(teamID: String, clientID: String, now: Int64) -> Bool {
        transfers.contains { t in
            t.clientID == clientID && (t.fromTeam == teamID || t.toTeam == teamID) && now >= t.acceptedAt + Int64(t.windowDays) * 86_400
        }
    }

    /// Team A: the `transfer_sub` of `sub` for `target`.
    public func generate(teamID: String, sub: String, target: String) throws(Refusal) -> String {
        guard !sub.isEmpty else { throw invalidRequest("sub is missing") }
        guard AppleCredentials.isTenCharacterID(target) else { throw invalidRequest("target is not a team ID") }
        guard target != teamID else { throw invalidRequest("target is the caller's own team") }
        guard !hasRevoked(sub) else { throw invalidRequest("the user revoked authorization") }
        let body = mac("transfer", "\(teamID)|\(sub)|\(target)", length: 32)
        return "\(mac("check", "\(target)|\(body)", length: 6)).\(body)"
    }

    /// Team B: the team's own `sub` and email for `transferSub`.
    public func exchange(teamID: String, transferSub: String) throws(Refusal) -> MigratedUser {
        let parts = transferSub.split(separator: ".")
        guard parts.count == 2, mac("check", "\(teamID)|\(parts[1])", length: 6) == parts[0] else {
            throw invalidRequest("transfer_sub was not issued for this team")
        }
        guard !hasRevoked(transferSub) else { throw invalidRequest("the user revoked authorization") }
        return recipientUser(teamID: teamID, transferBody: String(parts[1]))
    }

    /// The user team `teamID` is given for the transfer identifier whose body is `transferBody`:
    /// a `sub` of its own and, for most users, an email: 3% none, 80% a private relay address
    /// of the team's own, the rest the user's own address (the same for every team).
    private func recipientUser(teamID: String, transferBody: String) -> MigratedUser {
        let digest = Array(HMAC<SHA256>.authenticationCode(for: Data("recipient|\(teamID)|\(transferBody)".utf8), using: secret))
        let sub = "001\(100 + Int(digest[0]) % 900).\(Hex.encode(digest[1..<17])).\(1000 + (Int(digest[17]) << 8 | Int(digest[18])) % 9000)"
        let roll = Int(digest[19]) * 100 / 256
        if roll < 3 { return MigratedUser(sub: sub, email: nil, isPrivateEmail: nil) }
        if roll < 83 { return MigratedUser(sub: sub, email: "\(Hex.encode(digest[20..<25]))@privaterelay.appleid.com", isPrivateEmail: true) }
        return MigratedUser(sub: sub, email: "user.\(Hex.encode(digest[20..<24]))@example.com", isPrivateEmail: false)
    }

    /// Team A: the email team `teamID`'s app was given when the user with `sub` signed in, as
    /// the rehearsal's accounts table starts with it. A user who shares their own address with
    /// the team it is transferred to shared it with this one too; every other user hid theirs
    /// behind a private relay address of this team's own (Apple gives some of them none when
    /// their identifier is exchanged). Nil for a team that transfers no app.
    public func senderEmail(teamID: String, sub: String) -> String? {
        guard let target = transfers.first(where: { $0.fromTeam == teamID })?.toTeam else { return nil }
        let recipient = recipientUser(teamID: target, transferBody: mac("transfer", "\(teamID)|\(sub)|\(target)", length: 32))
        if recipient.isPrivateEmail == false, let own = recipient.email { return own }
        let digest = Array(HMAC<SHA256>.authenticationCode(for: Data("sender-relay|\(teamID)|\(sub)".utf8), using: secret))
        return "\(Hex.encode(digest[0..<5]))@privaterelay.appleid.com"
    }

    /// Whether the user named by `identifier` revoked consent (listed, or within the fraction).
    public func hasRevoked(_ identifier: String) -> Bool {
        if revoked.contains(identifier) { return true }
        guard rules.revokedFraction > 0 else { return false }
        if let seed = rules.seed { return seed.fraction(["revoked", identifier]) < rules.revokedFraction }
        let digest = Array(HMAC<SHA256>.authenticationCode(for: Data("revoked|\(identifier)".utf8), using: secret))
        return Double(Int(digest[0]) << 8 | Int(digest[1])) / 65_536 < rules.revokedFraction
    }

    private func mac(_ purpose: String, _ text: String, length: Int) -> String {
        String(Hex.encode(HMAC<SHA256>.authenticationCode(for: Data("\(purpose)|\(text)".utf8), using: secret)).prefix(length))
    }

    private func invalidClient(_ why: String) -> Refusal { Refusal(status: 400, error: "invalid_client", description: why) }
    private func invalidRequest(_ why: String) -> Refusal { Refusal(status: 400, error: "invalid_request", description: why) }
}
