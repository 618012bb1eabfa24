import Crypto
import Foundation
import JWTKit

/// Makes client secrets: ES256 JWTs signed by jwt-kit with a team's Sign in with Apple
/// private key (the signature in the raw 64-byte R‖S form Apple requires, not ASN.1 DER).
public struct ClientSecretSigner: Sendable {
    /// Apple's limit on a client secret's lifetime: six months (15,777,000 s).
    public static let maximumLifetime: Int64 = 15_777_000
    /// The lifetime Handover uses unless told otherwise: one day.
    public static let defaultLifetime: Int64 = 86_400
    /// The audience every client secret names.
    public static let audience = "https://appleid.apple.com"

    public let credentials: AppleCredentials

    public init(credentials: AppleCredentials) { self.credentials = credentials }

    /// A client secret valid from `issuedAt` for `lifetime` seconds.
    public func make(
        issuedAt: Int64 = Int64(Date().timeIntervalSince1970), lifetime: Int64 = ClientSecretSigner.defaultLifetime
    ) async throws -> ClientSecret {
        guard lifetime > 0, lifetime <= ClientSecretSigner.maximumLifetime else {
            throw AppleIDError(
                .invalidConfiguration,
                "a client secret's lifetime must be 1 to \(ClientSecretSigner.maximumLifetime) s (six months); \(lifetime) was asked for")
        }
        let kid = JWKIdentifier(string: credentials.keyID)
        let keys = await JWTKeyCollection().add(ecdsa: try ES256PrivateKey(backing: credentials.privateKey), kid: kid)
        let claims = ClientSecretClaims(
            iss: credentials.teamID, iat: issuedAt, exp: issuedAt + lifetime, aud: ClientSecretSigner.audience, sub: credentials.clientID)
        return ClientSecret(token: try await keys.sign(claims, kid: kid), expiresAt: issuedAt + lifetime)
    }
}

/// A client secret's claims, as Apple's "Creating a client secret" lists them.
public struct ClientSecretClaims: JWTPayload, Equatable {
    public var iss: String
    public var iat: Int64
    public var exp: Int64
    public var aud: String
    public var sub: String

    public init(iss: String, iat: Int64, exp: Int64, aud: String, sub: String) {
        self.iss = iss
        self.iat = iat
        self.exp = exp
        self.aud = aud
        self.sub = sub
    }

    /// Nothing: who reads a client secret checks its claims against what it expects.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// A signed client secret. Its description never shows the token.
public struct ClientSecret: Sendable, CustomStringConvertible {
    /// The JWT, for the `client_secret` parameter.
    public let token: String
    /// `exp`, in seconds since 1970.
    public let expiresAt: Int64

    public var description: String { "ClientSecret(expires \(expiresAt), redacted)" }
}

extension ClientSecret {
    /// The claims of the client secret `token` once its ES256 signature (raw R‖S) verifies with
    /// `publicKey`; jwt-kit's error when it does not.
    public static func verifiedClaims(_ token: String, publicKey: P256.Signing.PublicKey) async throws -> ClientSecretClaims {
        let keys = await JWTKeyCollection().add(ecdsa: try ES256PublicKey(backing: publicKey))
        return try await keys.verify(token, as: ClientSecretClaims.self)
    }
}
