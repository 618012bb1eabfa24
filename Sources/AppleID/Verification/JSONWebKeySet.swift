import CryptoExtras
import Foundation

/// Apple's public keys as published at `/auth/keys`: the RSA keys of a JWKS by `kid`.
public struct JSONWebKeySet: Sendable {
    /// The usable keys by key ID.
    public let keys: [String: _RSA.Signing.PublicKey]

    public init(keys: [String: _RSA.Signing.PublicKey]) { self.keys = keys }

    /// Why a key set could not be read.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// Parses a JWKS document. Keys that are not RSA signing keys for RS256 are skipped; a
    /// document with no usable key is refused, since it could verify nothing.
    public init(json: Data) throws {
        guard let document = AppleAnswers.decode(AppleAnswers.KeySet.self, from: json) else {
            throw Invalid(description: "not a JWKS: expected a JSON object with a \"keys\" array")
        }
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        for entry in document.keys {
            guard entry.kty == "RSA", let kid = entry.kid else { continue }
            if let use = entry.use, use != "sig" { continue }
            if let alg = entry.alg, alg != "RS256" { continue }
            guard let n = entry.n.flatMap({ Base64URL.decode($0[...]) }), let e = entry.e.flatMap({ Base64URL.decode($0[...]) }) else {
                throw Invalid(description: "key \(kid) has no base64url n and e")
            }
            do { keys[kid] = try _RSA.Signing.PublicKey(n: n, e: e) } catch {
                throw Invalid(description: "key \(kid) is not a usable RSA public key (\(error))")
            }
        }
        guard !keys.isEmpty else { throw Invalid(description: "the JWKS holds no RSA signing key") }
        self.keys = keys
    }
}
