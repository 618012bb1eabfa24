import Crypto
import Foundation

/// Makes client secrets: ES256 JWTs signed with a team's Sign in with Apple private key,
/// with the signature in the raw 64-byte R‖S form Apple requires (not ASN.1 DER).
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
    ) throws -> ClientSecret {
        guard lifetime > 0, lifetime <= ClientSecretSigner.maximumLifetime else {
            throw AppleIDError(
                .invalidConfiguration,
                "a client secret's lifetime must be 1 to \(ClientSecretSigner.maximumLifetime) s (six months); \(lifetime) was asked for")
        }
        let header = Header(alg: "ES256", kid: credentials.keyID)
        let claims = Claims(
            iss: credentials.teamID, iat: issuedAt, exp: issuedAt + lifetime, aud: ClientSecretSigner.audience, sub: credentials.clientID)
        let input = try CompactJWS.signingInput(header: header, claims: claims)
        let signature = try credentials.privateKey.signature(for: Data(input.utf8)).rawRepresentation
        return ClientSecret(token: input + "." + Base64URL.encode(signature), expiresAt: issuedAt + lifetime)
    }

    /// A client secret's JOSE header.
    struct Header: Encodable {
        var alg: String
        var kid: String
    }

    /// A client secret's claims, as Apple's "Creating a client secret" lists them.
    struct Claims: Encodable {
        var iss: String
        var iat: Int64
        var exp: Int64
        var aud: String
        var sub: String
    }
}

/// A signed client secret. Its description never shows the token.
public struct ClientSecret: Sendable, CustomStringConvertible {
    /// The JWT, for the `client_secret` parameter.
    public let token: String
    /// `exp`, in seconds since 1970.
    public let expiresAt: Int64

    public var description: String { "ClientSecret(expires \(expiresAt), redacted)" }
}
