import AppleID
import Basics
import Crypto
import CryptoExtras
import Foundation
import JWTKit
import Ledger

/// Signs what Apple signs with its RSA key (RS256): identity tokens and server-to-server
/// notification payloads, and publishes the public key as a JWKS.
public struct TokenMinter: Sendable {
    public static let issuer = "https://appleid.apple.com"
    private let key: _RSA.Signing.PrivateKey
    /// The key ID in every token header and in the JWKS.
    public let keyID: String

    public init(key: _RSA.Signing.PrivateKey) throws {
        self.key = key
        let modulus = try key.publicKey.getKeyPrimitives().modulus
        self.keyID = "SIM" + String(Base64URL.encode(Data(SHA256.hash(data: modulus))).prefix(7))
    }

    /// A minter that names `keyID` whatever its key: a forger claiming Apple's key, for
    /// rehearsing what a forged notification looks like.
    public init(key: _RSA.Signing.PrivateKey, claimingKeyID keyID: String) {
        self.key = key
        self.keyID = keyID
    }

    /// The JWKS served at `/auth/keys`.
    public func jwks() throws -> String {
        let primitives = try key.publicKey.getKeyPrimitives()
        let jwk = [
            "kty": "RSA", "kid": keyID, "use": "sig", "alg": "RS256", "n": Base64URL.encode(primitives.modulus),
            "e": Base64URL.encode(primitives.publicExponent),
        ]
        return SimulatorAnswers.text(["keys": [jwk]])
    }

    /// Signs `claims` as an RS256 JWS with this key's `kid`, through jwt-kit (whose header also
    /// says `"typ":"JWT"`, which Apple's does not; a verifier ignores it).
    public func sign(_ claims: [String: JSONValue]) async throws -> String {
        let kid = JWKIdentifier(string: keyID)
        let keys = await JWTKeyCollection().add(rsa: try Insecure.RSA.PrivateKey(backing: key), digestAlgorithm: .sha256, kid: kid)
        return try await keys.sign(MintedClaims(claims: claims), kid: kid)
    }

    /// Signs `rawClaims` under the header `rawHeader`, both byte for byte as given (any bytes,
    /// JSON or not): what Apple's key could be made to sign, for showing a verifier anything.
    /// No JWT library makes such a token, so this one is put together here.
    public func sign(rawHeader: [UInt8], rawClaims: [UInt8]) throws -> String {
        let input = Base64URL.encode(rawHeader) + "." + Base64URL.encode(rawClaims)
        let signature = try key.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// An identity token as Apple issues at sign-in; `transferSub` during a transfer window.
    public func identityToken(
        audience: String, sub: String, transferSub: String? = nil, email: String? = nil,
        isPrivateEmail: Bool? = nil, nonce: String? = nil, issuedAt: Int64, lifetime: Int64 = 600
    ) async throws -> String {
        var claims: [String: JSONValue] = [
            "iss": .string(TokenMinter.issuer), "aud": .string(audience), "sub": .string(sub), "iat": .int(issuedAt),
            "exp": .int(issuedAt + lifetime), "auth_time": .int(issuedAt), "real_user_status": .int(2), "nonce_supported": .bool(nonce != nil),
        ]
        if let transferSub { claims["transfer_sub"] = .string(transferSub) }
        if let email {
            claims["email"] = .string(email)
            claims["email_verified"] = .string("true")
        }
        if let isPrivateEmail { claims["is_private_email"] = .string(isPrivateEmail ? "true" : "false") }
        if let nonce { claims["nonce"] = .string(nonce) }
        return try await sign(claims)
    }

    /// A notification body `{"payload": "<JWS>"}` with `events` as a JSON string, as Apple sends it.
    public func notification(
        audience: String, type: String, sub: String, email: String? = nil, isPrivateEmail: Bool? = nil,
        eventTime: Int64, jti: String = UUID().uuidString.lowercased()
    ) async throws -> String {
        var event: [String: JSONValue] = ["type": .string(type), "sub": .string(sub), "event_time": .int(eventTime)]
        if let email { event["email"] = .string(email) }
        if let isPrivateEmail { event["is_private_email"] = .string(isPrivateEmail ? "true" : "false") }
        let payload = try await sign([
            "iss": .string(TokenMinter.issuer), "aud": .string(audience), "iat": .int(eventTime), "jti": .string(jti),
            "events": .string(SimulatorAnswers.text(event)),
        ])
        return SimulatorAnswers.text(["payload": payload])
    }
}

/// Claims as given, for jwt-kit to sign: any members, with the values the caller chose.
struct MintedClaims: JWTPayload {
    let claims: [String: JSONValue]

    init(claims: [String: JSONValue]) { self.claims = claims }

    init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "minted claims are written, never read back"))
    }

    func encode(to encoder: any Encoder) throws { try claims.encode(to: encoder) }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
