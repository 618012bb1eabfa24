import AppleID
import Crypto
import CryptoExtras
import Foundation

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
        let jwk: [String: String] = ["kty": "RSA", "kid": keyID, "use": "sig", "alg": "RS256",
                                     "n": Base64URL.encode(primitives.modulus), "e": Base64URL.encode(primitives.publicExponent)]
        let data = try JSONSerialization.data(withJSONObject: ["keys": [jwk]], options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// Signs `claims` as an RS256 JWS with this key's `kid`.
    public func sign(_ claims: [String: Any]) throws -> String {
        let input = try CompactJWS.signingInput(header: ["alg": "RS256", "kid": keyID], claims: claims)
        let signature = try key.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// An identity token as Apple issues at sign-in; `transferSub` during a transfer window.
    public func identityToken(audience: String, sub: String, transferSub: String? = nil, email: String? = nil,
                              isPrivateEmail: Bool? = nil, nonce: String? = nil, issuedAt: Int64, lifetime: Int64 = 600) throws -> String {
        var claims: [String: Any] = ["iss": TokenMinter.issuer, "aud": audience, "sub": sub, "iat": issuedAt, "exp": issuedAt + lifetime,
                                     "auth_time": issuedAt, "real_user_status": 2, "nonce_supported": nonce != nil]
        if let transferSub { claims["transfer_sub"] = transferSub }
        if let email {
            claims["email"] = email
            claims["email_verified"] = "true"
        }
        if let isPrivateEmail { claims["is_private_email"] = isPrivateEmail ? "true" : "false" }
        if let nonce { claims["nonce"] = nonce }
        return try sign(claims)
    }

    /// A notification body `{"payload": "<JWS>"}` with `events` as a JSON string, as Apple sends it.
    public func notification(audience: String, type: String, sub: String, email: String? = nil, isPrivateEmail: Bool? = nil,
                             eventTime: Int64, jti: String = UUID().uuidString.lowercased()) throws -> String {
        var event: [String: Any] = ["type": type, "sub": sub, "event_time": eventTime]
        if let email { event["email"] = email }
        if let isPrivateEmail { event["is_private_email"] = isPrivateEmail ? "true" : "false" }
        let events = String(decoding: try JSONSerialization.data(withJSONObject: event, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
        let payload = try sign(["iss": TokenMinter.issuer, "aud": audience, "iat": eventTime, "jti": jti, "events": events])
        let body = try JSONSerialization.data(withJSONObject: ["payload": payload], options: [.withoutEscapingSlashes])
        return String(decoding: body, as: UTF8.self)
    }
}
