import Basics

/// What Handover checks of a signed token before jwt-kit verifies its signature: the refusals
/// jwt-kit does not make or does not tell apart, each with its own reason; and the token's
/// parts, decoded once, for the signature check and the payload's decoding.
///
/// jwt-kit reports a part that is not base64url and a part that is not JSON alike, checks the
/// signature before it reads the payload, accepts base64 spelled more than one way, and falls
/// back to a default key for a `kid` it does not hold. Here the token is three parts, each the
/// one base64url spelling of its bytes; header and payload are JSON objects read as everything
/// from outside is (UTF-8, no member named twice); `alg` is RS256 and `kid` is named.
struct TokenPrecheck: Sendable {
    /// The key ID the header names.
    let keyID: String
    /// What the signature signs: the header and payload as sent, with the dot between them.
    let signingInput: [UInt8]
    /// The payload's bytes, a JSON object.
    let payload: [UInt8]
    /// The signature's bytes.
    let signature: [UInt8]

    init(_ token: String) throws(TokenRejection) {
        let token = token.trimming(.whitespacesAndNewlines)
        // Split by bytes: a dot followed by a combining mark is one Character but still a dot.
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw TokenRejection(.malformedJWS, "a JWS has 3 dot-separated parts, this has \(parts.count)") }
        var decoded: [[UInt8]] = []
        for (part, name) in zip(parts, ["header", "payload", "signature"]) {
            guard let bytes = Base64URL.bytes(utf8: part) else { throw TokenRejection(.malformedBase64, "the \(name) is not base64url") }
            decoded.append(bytes)
        }
        let header: [String: JSONValue]
        do { header = try JSONValue.parseObject(untrusted: decoded[0]) } catch {
            throw TokenRejection(.malformedJSON, "the header is not a JSON object (\(error))")
        }
        do { _ = try JSONValue.parseObject(untrusted: decoded[1]) } catch {
            throw TokenRejection(.malformedJSON, "the payload is not a JSON object (\(error))")
        }
        switch header["alg"]?.stringValue {
        case "RS256": break
        case nil: throw TokenRejection(.algorithmNotAllowed, "the header has no alg; Apple signs with RS256")
        case let other? where other.lowercased() == "none":
            throw TokenRejection(.algorithmNone, "alg is \(TokenRejection.quote(other)): an unsigned token")
        case let other?:
            throw TokenRejection(
                .algorithmNotAllowed,
                "alg is \(TokenRejection.quote(other, limit: 16)); only RS256 is accepted (Apple signs with RS256; an HMAC alg would be keyed with a public key)"
            )
        }
        guard let kid = header["kid"]?.stringValue, !kid.isEmpty else { throw TokenRejection(.missingKeyID, "the header has no kid") }
        self.keyID = kid
        self.signingInput = Array(token.utf8[parts[0].startIndex..<parts[1].endIndex])
        self.payload = decoded[1]
        self.signature = decoded[2]
    }
}
