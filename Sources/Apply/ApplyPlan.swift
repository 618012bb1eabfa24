import Ledger
import Projections

/// What `apply` would do to the app's accounts, read before anything is written: for each
/// account, whether it takes its new value, already holds it, does not exist (or is outside the
/// condition), or would collide with another account already holding that value.
public struct ApplyPlan: Sendable {
    /// One account `apply` is asked to set: to the user's `recipient_sub`, or for an undo back
    /// to the value it held before.
    public struct Item: Sendable, Equatable {
        public var accountID: String
        public var transferSub: String?
        /// The value the account is to take.
        public var new: String?
        /// For an undo, the value the account must still hold (what the undone run wrote); nil
        /// for an apply, which changes whatever the account holds.
        public var expected: String??

        public init(accountID: String, transferSub: String? = nil, new: String?, expected: String?? = nil) {
            self.accountID = accountID
            self.transferSub = transferSub
            self.new = new
            self.expected = expected
        }

        /// The item of a migrated user with an `account_id` and a `recipient_sub`, else nil.
        public init?(user: UserState) {
            guard user.status == .migrated, let accountID = user.accountID, let new = user.recipientSub else { return nil }
            self.init(accountID: accountID, transferSub: user.transferSub, new: new)
        }
    }

    /// One account's planned outcome.
    public struct Entry: Sendable, Equatable {
        public var accountID: String
        public var transferSub: String?
        /// The value the account takes.
        public var new: String?
        /// The account's value when the plan read it (an undo: the value it must still hold).
        public var old: String?
        public var outcome: ApplyPlanned
        /// For a collision, the keys of the accounts holding `new`.
        public var holders: [String] = []
    }

    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    /// How many entries have `outcome`.
    public func count(_ outcome: ApplyPlanned) -> Int { entries.reduce(0) { $0 + ($1.outcome == outcome ? 1 : 0) } }

    /// The changes a commit writes: the entries planned to change.
    public var changes: [AccountChange] {
        entries.filter { $0.outcome == .change }.map { AccountChange(key: $0.accountID, old: $0.old, new: $0.new) }
    }

    /// Plans the migrated users among `users` (see ``Item/init(user:)``) against `table`.
    public init(users: [UserState], table: some AccountsTable, batch: Int = 10_000) async throws {
        try await self.init(items: users.compactMap(Item.init(user:)), table: table, batch: batch)
    }

    /// Plans `items` against `table`, reading `batch` keys at a time.
    public init(items: [Item], table: some AccountsTable, batch: Int = 10_000) async throws {
        var entries: [Entry] = []
        entries.reserveCapacity(items.count)
        for start in stride(from: 0, to: items.count, by: batch) {
            entries += try await Self.entries(Array(items[start..<min(start + batch, items.count)]), table: table)
        }
        self.entries = entries
    }

    /// The planned entries of `items`, read from `table` in two queries.
    static func entries(_ items: [Item], table: any AccountsTable) async throws -> [Entry] {
        let current = try await table.currentValues(forKeys: items.map(\.accountID))
        let holders = try await table.holders(of: items.compactMap(\.new))
        return items.map { item in
            var entry = Entry(accountID: item.accountID, transferSub: item.transferSub, new: item.new, old: nil, outcome: .noAccount)
            if let value = current[item.accountID] {
                entry.old = item.expected ?? value
                entry.outcome = value == item.new ? .already : .change
            }
            let others = item.new.map { (holders[$0] ?? []).filter { $0 != item.accountID } } ?? []
            if !others.isEmpty, entry.outcome != .already {
                entry.outcome = .collision
                entry.holders = others
            }
            return entry
        }
    }
}
