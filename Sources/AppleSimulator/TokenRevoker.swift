import Synchronization

/// Applies ``FaultInjection/TokenRevocation``: counts the migration calls answered and, once
/// the rule's count is reached, refuses the access tokens it names, as Apple refuses a token
/// it revoked before its hour is up.
final class TokenRevoker: Sendable {
    private let rule: FaultInjection.TokenRevocation?
    /// Migration calls answered so far, and the `exp` of the newest token revoked (nil before
    /// the rule takes effect).
    private let state = Mutex<(calls: Int, revokedThrough: Int64?)>((0, nil))

    init(_ rule: FaultInjection.TokenRevocation?) { self.rule = rule }

    /// Whether the token that expires at `expiresAt` is refused now. `newest` is the expiry of
    /// the newest token issued so far (tokens issued later expire later).
    func refuses(expiresAt: Int64, newest: Int64) -> Bool {
        guard let rule else { return false }
        return state.withLock { state in
            switch rule {
            case .once(let calls):
                guard state.calls >= calls else { return false }
                if state.revokedThrough == nil { state.revokedThrough = newest }
                return expiresAt <= state.revokedThrough!
            case .always(let calls):
                return state.calls >= calls
            }
        }
    }

    /// Counts one migration call answered.
    func answered() { state.withLock { $0.calls += 1 } }
}
