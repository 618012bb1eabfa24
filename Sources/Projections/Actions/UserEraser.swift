import Ledger

/// Erases one user's personal data: destroys their data keys, then records "user erased".
///
/// Keys go first: if the process dies in between, running erase again records the event
/// (the keys are already gone); the log never claims an erasure that did not happen.
public struct UserEraser {
    public let ledger: Ledger
    public let projection: UserProjection

    public init(ledger: Ledger, projection: UserProjection) {
        self.ledger = ledger
        self.projection = projection
    }

    /// What an erasure did.
    public struct Result: Sendable {
        public var user: UserState
        public var keysDestroyed: Int
        public var sequence: UInt64?
        /// The user was already erased; nothing new was recorded.
        public var alreadyErased: Bool
    }

    /// Erases the user named by `identifier` (any kind); nil if no user has it.
    public func erase(_ identifier: String, reason: String) async throws -> Result? {
        guard let user = try projection.read(ledger, { snapshot, _ in try snapshot.user(matching: identifier) }) else { return nil }
        return try await erase(user, reason: reason)
    }

    /// Erases the user holding exactly `identifier`; nil if no user has it.
    public func erase(holding identifier: Identifier, reason: String) async throws -> Result? {
        guard let user = try projection.read(ledger, { snapshot, _ in try snapshot.user(with: identifier) }) else { return nil }
        return try await erase(user, reason: reason)
    }

    private func erase(_ user: UserState, reason: String) async throws -> Result {
        let subjects = user.identifiers
        let destroyed = try ledger.sealer.requireKeyStore().destroyKeys(for: subjects)
        if user.erasedAt != nil, destroyed == 0 {
            return Result(user: user, keysDestroyed: 0, sequence: nil, alreadyErased: true)
        }
        var ids = Identifiers()
        for id in subjects { ids[id.kind] = id.value }
        let outcome = try await ledger.append(EventDraft(.userErased(UserErased(reason: reason, keysDestroyed: destroyed)), identifiers: ids))
        return Result(user: user, keysDestroyed: destroyed, sequence: outcome.sequence, alreadyErased: false)
    }
}
