import JWTKit

extension TokenRejection {
    /// jwt-kit's refusal of a token that passed ``TokenPrecheck``, as the reason recorded: the
    /// one table from jwt-kit's errors to Handover's reasons.
    init(jwtKit error: any Error, keyID: String) {
        switch (error as? JWTError)?.errorType ?? .generic {
        case .signatureVerificationFailed:
            self.init(.badSignature, "the RS256 signature does not verify with key \(TokenRejection.quote(keyID))")
        case .malformedToken:
            // The payload, a JSON object by the precheck, that jwt-kit's decoder still refused.
            self.init(.malformedJSON, "the payload could not be read (\(error))")
        case .unknownKID, .noKeyProvided, .missingKIDHeader:
            self.init(.unknownKeyID, "no key \(TokenRejection.quote(keyID)) in Apple's key set")
        case .unsupportedAlgorithm, .signingAlgorithmFailure, .invalidJWK:
            self.init(.algorithmNotAllowed, "key \(TokenRejection.quote(keyID)) cannot verify this token (\(error))")
        default:
            self.init(.badSignature, "the token does not verify with key \(TokenRejection.quote(keyID)) (\(error))")
        }
    }
}
