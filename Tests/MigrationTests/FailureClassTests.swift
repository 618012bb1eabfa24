import AppleID
import Basics
import Ledger
import Migration
import Testing

/// An error from Apple as the ledger records it (``CallFailure``): the class Apple gave, from the
/// one list both use.
@Suite("failure classes recorded for Apple's errors")
struct FailureClassTests {
    @Test(
        "each error class is recorded as itself, with Apple's code, the HTTP status, the message and the attempts", arguments: FailureClass.allCases)
    func recordedAsGiven(_ kind: FailureClass) {
        let error = AppleIDError(kind, "what happened", httpStatus: 400, appleError: "apple_code", retryAfter: 3, attempts: 4)
        let failure = CallFailure(error)
        #expect(failure.kind == kind)
        #expect(
            failure.code == "apple_code" && failure.httpStatus == 400 && failure.message == "what happened" && failure.attempts == 4, "\(failure)")
    }

    @Test("a transport failure keeps no code and no status")
    func transport() {
        let transport = CallFailure(AppleIDError(.connection, "dropped"))
        #expect(transport.kind == .connection && transport.code == nil && transport.httpStatus == nil && transport.attempts == 1)
    }
}
