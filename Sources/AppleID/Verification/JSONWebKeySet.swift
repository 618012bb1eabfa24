import Foundation
import JWTKit

/// Apple's public keys as published at `/auth/keys`: the RS256 keys of a JWKS, by `kid`, read
/// by jwt-kit; a token is verified with the key its header names and no other.
public struct JSONWebKeySet: Sendable {
    /// The key IDs of the usable keys.
    public var keyIDs: Set<String> { Set(keys.keys) }
    /// jwt-kit's RS256 verifier of each key, by key ID.
    private let keys: [String: any JWTAlgorithm]

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
        var keys: [String: any JWTAlgorithm] = [:]
        for entry in document.keys {
            guard entry.kty == "RSA", let kid = entry.kid else { continue }
            if let use = entry.use, use != "sig" { continue }
            if let alg = entry.alg, alg != "RS256" { continue }
            guard let n = entry.n, let e = entry.e else { throw Invalid(description: "key \(kid) has no n and e") }
            let identifier = JWKIdentifier(string: kid)
            do {
                try await collection.add(jwk: .rsa(.rs256, identifier: identifier, modulus: n, exponent: e))
                keys[kid] = try await collection.getKey(for: identifier, alg: "RS256")
            } catch {
                throw Invalid(description: "key \(kid) is not a usable RSA public key (\(error))")
            }
        }
        guard !keys.isEmpty else { throw Invalid(description: "the JWKS holds no RSA signing key") }
        self.keys = keys
    }

    /// Whether the set holds the key named `kid`: asked for each token, without building a set.
    public func holds(_ kid: String) -> Bool { keys[kid] != nil }

    /// The payload of a token, once its RS256 signature verifies with the key its header
    /// names, decoded from the bytes the precheck holds; jwt-kit's error when it does not.
    func verify<Payload: JWTPayload>(_ token: TokenPrecheck, as type: Payload.Type) async throws -> Payload {
        // A kid not here is refused before it comes to this set: there is no default key.
        guard let key = keys[token.keyID] else { throw JWTError.unknownKID(JWKIdentifier(string: token.keyID)) }
        guard try key.verify(token.signature, signs: token.signingInput) else { throw JWTError.signatureVerificationFailed }
        let payload: Payload
        do { payload = try JSONDecoder().decode(Payload.self, from: Data(token.payload)) } catch {
            throw JWTError.malformedToken(reason: "\(error)")
        }
        try await payload.verify(using: key)
        return payload
    }
}
