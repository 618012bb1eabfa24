import Foundation
import JWTKit

/// Apple's public keys as published at `/auth/keys`: the RS256 keys of a JWKS, by `kid`, in a
/// jwt-kit key collection that verifies with the key a token names and no other.
public struct JSONWebKeySet: Sendable {
    /// The key IDs of the usable keys.
    public let keyIDs: Set<String>
    private let collection: JWTKeyCollection

    /// Why a key set could not be read.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// Parses a JWKS document. Keys that are not RSA signing keys for RS256 are skipped; a
    /// document with no usable key is refused, since it could verify nothing.
    public init(json: Data) async throws(Invalid) {
        guard let document = AppleAnswers.decode(AppleAnswers.KeySet.self, from: json) else {
            throw Invalid(description: "not a JWKS: expected a JSON object with a \"keys\" array")
        }
        let collection = JWTKeyCollection()
        var keyIDs: Set<String> = []
        for entry in document.keys {
            guard entry.kty == "RSA", let kid = entry.kid else { continue }
            if let use = entry.use, use != "sig" { continue }
            if let alg = entry.alg, alg != "RS256" { continue }
            guard let n = entry.n, let e = entry.e else { throw Invalid(description: "key \(kid) has no n and e") }
            do {
                try await collection.add(jwk: .rsa(.rs256, identifier: JWKIdentifier(string: kid), modulus: n, exponent: e))
            } catch {
                throw Invalid(description: "key \(kid) is not a usable RSA public key (\(error))")
            }
            keyIDs.insert(kid)
        }
        guard !keyIDs.isEmpty else { throw Invalid(description: "the JWKS holds no RSA signing key") }
        // A token whose kid is not here is refused before it comes to the collection; with no
        // default key, the collection could not fall back to one either.
        await collection.clearDefault()
        self.keyIDs = keyIDs
        self.collection = collection
    }

    /// The payload of `token`, once its RS256 signature verifies with the key its header names;
    /// jwt-kit's error when it does not.
    func verify<Payload: JWTPayload>(_ token: String, as type: Payload.Type) async throws -> Payload {
        try await collection.verify(token, as: type)
    }
}
