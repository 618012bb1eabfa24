import AppleID
import Ledger
import Migration
import Testing

/// An error from Apple as the ledger records it (``Failure``): each class of ``AppleIDError``
/// under the failure kind of the same name, the classes no failure event records as `other`.
@Suite("failure kinds recorded for Apple's errors")
struct FailureClassTests {
    @Test("each error class is recorded as its failure kind, with Apple's code, the HTTP status, the message and the attempts")
    func recordedKinds() {
        let kinds: [(AppleIDError.Code, Failure.Kind)] = [
            (.invalidRequest, .invalidRequest), (.invalidClient, .invalidClient), (.invalidGrant, .invalidGrant),
            (.rateLimited, .rateLimited), (.serverError, .serverError), (.timeout, .timeout), (.connection, .connection),
            (.invalidResponse, .invalidResponse),
            // A refused token is renewed and a bad configuration stops the run before a call:
            // neither is a user's failure of its own kind.
            (.invalidToken, .other), (.invalidConfiguration, .other), (.other, .other),
        ]
        for (code, kind) in kinds {
            let error = AppleIDError(code, "what happened", httpStatus: 400, appleError: "apple_code", retryAfter: 3, attempts: 4)
            let failure = Failure(error)
            #expect(failure.kind == kind, "\(code.rawValue)")
            #expect(failure.code == "apple_code" && failure.httpStatus == 400 && failure.message == "what happened" && failure.attempts == 4, "\(code.rawValue): \(failure)")
            if kind != .other { #expect(kind.rawValue == code.rawValue, "one name for one class in the ledger and in the errors") }
        }
        let transport = Failure(AppleIDError(.connection, "dropped"))
        #expect(transport.code == nil && transport.httpStatus == nil && transport.attempts == 1)
        #expect(Set(kinds.map(\.1)) == Set(Failure.Kind.allCases), "every failure kind is reachable")
    }
}
