import AppleID
import AppleSimulator
import Crypto
import Foundation
import JWTKit
import TestSupport
import Testing

/// Client secrets as Handover signs them (through jwt-kit) and as the stand-in checks them, as
/// Apple does: every refusal the stand-in makes, reached.
@Suite("Client secrets")
struct ClientSecretTests {
    static let team = "AAAA111111"
    static let clientID = "com.example.notes"
    let dir = TemporaryDirectory()

    /// A stand-in with one registered team, and that team's credentials.
    func standIn() throws -> (SimulatedApple, AppleCredentials) {
        let directory = try SimulatorDirectory(path: dir.sub("apple"))
        let (keyID, keyPath) = try directory.registerTeam(ClientSecretTests.team, clientIDs: [ClientSecretTests.clientID, "com.example.web"])
        let credentials = try AppleCredentials(
            teamID: ClientSecretTests.team, clientID: ClientSecretTests.clientID, keyID: keyID, privateKeyPath: keyPath)
        return (try SimulatedApple(directory: directory, rules: .init()), credentials)
    }

    @Test("a secret signed here: ES256 with the key's kid, a raw 64-byte signature, Apple's claims, a day's lifetime; accepted by the stand-in")
    func signed() async throws {
        let (apple, credentials) = try standIn()
        let now = Int64(Date().timeIntervalSince1970)
        let secret = try await ClientSecretSigner(credentials: credentials).make(issuedAt: now)
        let (header, claims, signature) = try DefaultJWTParser().parse(Array(secret.token.utf8), as: ClientSecretClaims.self)
        #expect(header.alg == "ES256" && header.kid == credentials.keyID)
        // jwt-kit's header says "typ":"JWT" too, which Apple's documentation does not list and does not refuse.
        #expect(header.typ == "JWT")
        #expect(signature.count == 64)
        #expect(
            claims
                == ClientSecretClaims(
                    iss: ClientSecretTests.team, iat: now, exp: now + 86_400, aud: "https://appleid.apple.com", sub: ClientSecretTests.clientID))
        #expect(secret.expiresAt == now + 86_400 && !secret.description.contains(secret.token))
        let team = try await apple.authenticate(clientID: ClientSecretTests.clientID, clientSecret: secret.token, now: now)
        #expect(team.teamID == ClientSecretTests.team)
    }

    @Test("a lifetime of 0 or beyond six months is refused before anything is signed", arguments: [0, -1, 15_777_001] as [Int64])
    func lifetime(_ seconds: Int64) async throws {
        let (_, credentials) = try standIn()
        await #expect(throws: AppleIDError.self) { _ = try await ClientSecretSigner(credentials: credentials).make(lifetime: seconds) }
    }

    /// One way a client secret is wrong, and the stand-in's reason for refusing it.
    struct Wrong: Sendable, CustomTestStringConvertible {
        let name: String
        let reason: String
        var clientID = ClientSecretTests.clientID
        /// The secret to send, made from the team's credentials and the time.
        let secret: @Sendable (AppleCredentials, Int64) async throws -> String?
        var testDescription: String { name }
    }

    /// `claims` signed by `key` (the team's own unless given) under the kid `kid`.
    static func signed(
        _ claims: ClientSecretClaims, _ credentials: AppleCredentials, key: P256.Signing.PrivateKey? = nil, kid: String? = nil
    )
        async throws -> String
    {
        let keys = await JWTKeyCollection().add(ecdsa: try ES256PrivateKey(backing: key ?? credentials.privateKey))
        return try await keys.sign(claims, header: ["kid": .string(kid ?? credentials.keyID)])
    }

    static func claims(_ credentials: AppleCredentials, _ now: Int64) -> ClientSecretClaims {
        ClientSecretClaims(iss: credentials.teamID, iat: now, exp: now + 600, aud: ClientSecretSigner.audience, sub: credentials.clientID)
    }

    static let wrongs: [Wrong] = [
        Wrong(name: "no client_id", reason: "client_id is missing", clientID: "") { c, now in try await signed(claims(c, now), c) },
        Wrong(name: "no secret", reason: "client_secret is missing") { _, _ in nil },
        Wrong(name: "not a JWT", reason: "client_secret is not a JWT") { _, _ in "not.a-jwt" },
        Wrong(name: "HS256", reason: "client_secret alg must be ES256") { c, now in
            let keys = await JWTKeyCollection().add(hmac: HMACKey(from: String(repeating: "a shared secret ", count: 4)), digestAlgorithm: .sha256)
            return try await keys.sign(claims(c, now), header: ["kid": .string(c.keyID)])
        },
        Wrong(name: "unknown team", reason: "iss names no registered team") { c, now in
            var claims = claims(c, now)
            claims.iss = "ZZZZ999999"
            return try await signed(claims, c)
        },
        Wrong(name: "another key ID", reason: "kid is not the team's key ID") { c, now in try await signed(claims(c, now), c, kid: "KEYZ999999") },
        Wrong(name: "DER signature", reason: "ES256 needs raw R||S (64 bytes), not DER") { c, now in
            let token = try await signed(claims(c, now), c)
            let parts = token.split(separator: ".")
            let raw = try #require(Base64URL.decode(parts[2]))
            let der = try P256.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation
            return parts[0] + "." + parts[1] + "." + Base64URL.encode(der)
        },
        Wrong(name: "another key's signature", reason: "the signature does not verify with the team's key") { c, now in
            try await signed(claims(c, now), c, key: P256.Signing.PrivateKey())
        },
        Wrong(name: "another audience", reason: "aud must be https://appleid.apple.com") { c, now in
            var claims = claims(c, now)
            claims.aud = "https://example.com"
            return try await signed(claims, c)
        },
        Wrong(name: "sub is not the client_id", reason: "sub must equal client_id", clientID: "com.example.web") { c, now in
            try await signed(claims(c, now), c)
        },
        Wrong(name: "a client of no team", reason: "client_id is not one of the team's", clientID: "com.example.other") { c, now in
            var claims = claims(c, now)
            claims.sub = "com.example.other"
            return try await signed(claims, c)
        },
        Wrong(name: "expired", reason: "the client secret has expired") { c, now in
            var claims = claims(c, now - 7200)
            claims.exp = now - 1
            return try await signed(claims, c)
        },
        Wrong(name: "issued in the future", reason: "iat is in the future") { c, now in try await signed(claims(c, now + 3600), c) },
        Wrong(name: "longer than six months", reason: "exp is more than 15,777,000 s after iat") { c, now in
            var claims = claims(c, now)
            claims.exp = now + 15_777_001
            return try await signed(claims, c)
        },
    ]

    @Test("each wrong client secret is refused invalid_client with its reason", arguments: wrongs)
    func refused(_ wrong: Wrong) async throws {
        let (apple, credentials) = try standIn()
        let now = Int64(Date().timeIntervalSince1970)
        let secret = try await wrong.secret(credentials, now)
        do {
            _ = try await apple.authenticate(clientID: wrong.clientID, clientSecret: secret, now: now)
            Issue.record("accepted")
        } catch {
            #expect(error.status == 400 && error.error == "invalid_client" && error.description.contains(wrong.reason), "\(error.description)")
        }
    }
}
