import Ledger

/// Why no run can migrate a user who is not done: Apple reported the account deleted or the
/// consent revoked, or refused the user's own call for good (`invalid_request`, which a retry
/// does not change). Such a user is settled, not failing: nothing the team runs changes them,
/// although one who revoked consent can still migrate by signing in before the deadline.
public enum Settlement: String, Sendable, CaseIterable {
    case accountDeleted = "account-deleted"
    case consentRevoked = "consent-revoked"
    case refusedByApple = "refused-by-apple"
}

extension UserState {
    /// Why no run can migrate this user; nil for a user done, never attempted by this team's
    /// migration (unmatched), or one a run can still migrate.
    public var settlement: Settlement? {
        guard [.pending, .received, .failed].contains(status) else { return nil }
        if accountDeletedAt != nil { return .accountDeleted }
        if consentRevokedAt != nil { return .consentRevoked }
        if status == .failed, lastErrorClass == .invalidRequest { return .refusedByApple }
        return nil
    }
}
