import AppleID
import Basics
import Ledger

extension EventDraft {
    /// What the token endpoint answered for `credentials`, as recorded: "access token issued"
    /// (its expiry and fingerprint, never the token) or "access token failed" (the classified
    /// failure); of the run `runID` when a run asked.
    static func token(_ outcome: AppleSession.TokenOutcome, credentials: AppleCredentials, runID: String? = nil) -> EventDraft {
        switch outcome {
        case .issued(let token):
            let issued = AccessTokenIssued(
                teamID: credentials.teamID, clientID: credentials.clientID, keyID: credentials.keyID, expiresAt: Timestamp(token.expiresAt),
                fingerprint: token.fingerprint)
            return EventDraft(.accessTokenIssued(issued), occurredAt: Timestamp(token.issuedAt), runID: runID)
        case .failed(let error):
            let failed = AccessTokenFailed(
                teamID: credentials.teamID, clientID: credentials.clientID, keyID: credentials.keyID, failure: CallFailure(error))
            return EventDraft(.accessTokenFailed(failed), runID: runID)
        }
    }
}
