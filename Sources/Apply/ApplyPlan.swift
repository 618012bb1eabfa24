import Projections

/// What `apply` would do to the app's accounts, read before anything is written: for each
/// migrated user with an `account_id`, whether the account with that key takes the user's new
/// `sub`, already holds it, does not exist (or is outside the condition), or would collide with
/// another account already holding that `sub`.
public struct ApplyPlan: Sendable {
    /// One user's planned outcome.
    public struct Entry: Sendable, Equatable {
        public var accountID: String
        public var transferSub: String?
        /// The user's `recipient_sub`: the value the account takes.
        public var new: String
        /// The account's value when the plan read it (nil for NULL or no account).
        public var old: String?
        public var outcome: Outcome
        /// For a collision, the keys of the accounts holding `new`.
        public var holders: [String] = []
    }

    /// A planned outcome.
    public enum Outcome: String, Sendable, Equatable, CaseIterable {
        /// The account will take the new value.
        case change
        /// The account holds it already: nothing to do.
        case already
        /// No account has this key (or none the condition lets change).
        case noAccount = "no-account"
        /// Another account holds the new value: not written.
        case collision
    }

    public var entries: [Entry]

    /// How many entries have `outcome`.
    public func count(_ outcome: Outcome) -> Int { entries.reduce(0) { $0 + ($1.outcome == outcome ? 1 : 0) } }

    /// The changes a commit writes: the entries planned to change.
    public var changes: [AccountChange] {
        entries.filter { $0.outcome == .change }.map { AccountChange(key: $0.accountID, old: $0.old, new: $0.new) }
    }

    /// The users `apply` acts on: migrated, with A's `account_id` and the new `sub` recorded.
    public static func candidates(_ users: [UserState]) -> [UserState] {
        users.filter { $0.status == .migrated && $0.accountID != nil && $0.recipientSub != nil }
    }

    /// Plans `users` (see ``candidates(_:)``) against `table`, reading `batch` keys at a time.
    public init(users: [UserState], table: some AccountsTable, batch: Int = 10_000) async throws {
        let users = ApplyPlan.candidates(users)
        var entries: [Entry] = []
        entries.reserveCapacity(users.count)
        for start in stride(from: 0, to: users.count, by: batch) {
            let some = users[start..<min(start + batch, users.count)]
            let current = try await table.currentValues(forKeys: some.compactMap(\.accountID))
            let holders = try await table.holders(of: some.compactMap(\.recipientSub))
            for user in some {
                guard let accountID = user.accountID, let new = user.recipientSub else { continue }
                var entry = Entry(accountID: accountID, transferSub: user.transferSub, new: new, old: nil, outcome: .noAccount)
                let others = (holders[new] ?? []).filter { $0 != accountID }
                if let value = current[accountID] {
                    entry.old = value
                    entry.outcome = value == new ? .already : .change
                }
                if !others.isEmpty, entry.outcome != .already {
                    entry.outcome = .collision
                    entry.holders = others
                }
                entries.append(entry)
            }
        }
        self.entries = entries
    }
}
