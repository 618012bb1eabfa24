import Ledger
import Projections

/// What `apply` would do to the app's accounts, read before anything is written: for each
/// account, and in it each mapped column (a cell), whether it takes its new value, already holds
/// it, keeps an address of the user's own (the email column), does not exist (or is outside the
/// condition), or would collide with another account already holding that value.
public struct ApplyPlan: Sendable {
    /// One account `apply` is asked to set: each mapped column to the user's value, or for an
    /// undo back to the value it held before.
    public struct Item: Sendable, Equatable {
        /// One column the account is to take a value in.
        public struct Cell: Sendable, Equatable {
            public var column: ApplyColumn
            /// The value the account is to take.
            public var new: String?
            /// For an undo, the value the account must still hold (what the undone run wrote);
            /// nil for an apply, which changes whatever the account holds (over a relay address
            /// or NULL alone, in the email column).
            public var expected: String??
            /// The new value as the ledger holds it, sealed (an email cell's), so that the batch's
            /// row records it without sealing it again; nil: sealed when recorded, if need be.
            public var sealed: SealedValue?

            public init(column: ApplyColumn, new: String?, expected: String?? = nil, sealed: SealedValue? = nil) {
                self.column = column
                self.new = new
                self.expected = expected
                self.sealed = sealed
            }
        }

        public var accountID: String
        public var transferSub: String?
        /// The columns, in column order.
        public var cells: [Cell]
        /// The user's data key, which seals the email cell's addresses in the ledger; nil
        /// without an email cell.
        public var keyID: String?

        public init(accountID: String, transferSub: String? = nil, cells: [Cell], keyID: String? = nil) {
            self.accountID = accountID
            self.transferSub = transferSub
            self.cells = cells
            self.keyID = keyID
        }
    }

    /// One account's planned cells.
    public struct Entry: Sendable, Equatable {
        /// One column's plan.
        public struct Cell: Sendable, Equatable {
            public var column: ApplyColumn
            /// The value the account takes.
            public var new: String?
            /// The account's value when the plan read it (an undo: the value it must still hold).
            public var old: String?
            public var planned: ApplyPlanned
            /// For a collision, the keys of the accounts holding `new`.
            public var holders: [String] = []
            /// `new` sealed, as the item had it (``Item/Cell/sealed``).
            public var sealed: SealedValue?
        }

        public var accountID: String
        public var transferSub: String?
        public var cells: [Cell]
        /// The user's data key (``Item/keyID``).
        public var keyID: String?

        /// The cell of `column`, when planned.
        public func cell(_ column: ApplyColumn) -> Cell? { cells.first { $0.column == column } }
    }

    public var entries: [Entry]
    /// Accounts whose email column holds a private relay address that no cell replaces: the
    /// user never migrated, or Apple gave them no new relay address. Mail to it stops reaching
    /// them once the app is team B's. Only when the mapping sets the email column.
    public var staleAddresses: [StaleAddress] = []
    /// For an undo: the accounts whose addresses no longer open (the user was erased since):
    /// their email is not restored.
    public var erasedSince: [String] = []

    public init(entries: [Entry], staleAddresses: [StaleAddress] = []) {
        self.entries = entries
        self.staleAddresses = staleAddresses
    }

    /// How many cells of `column` have `outcome`.
    public func count(_ outcome: ApplyPlanned, in column: ApplyColumn) -> Int {
        entries.reduce(0) { $0 + ($1.cell(column)?.planned == outcome ? 1 : 0) }
    }

    /// The changes a commit writes: the cells planned to change, by account, then by column.
    public var changes: [AccountChange] {
        entries.flatMap { entry in
            entry.cells.filter { $0.planned == .change }.map { AccountChange(key: entry.accountID, column: $0.column, old: $0.old, new: $0.new) }
        }
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

    /// The planned entries of `items`, read from `table`: the rows' current values in one query,
    /// then, for each column of unique values, the accounts holding the new ones in one more.
    static func entries(_ items: [Item], table: any AccountsTable) async throws -> [Entry] {
        let mapped = table.mapping.mapped.map(\.value)
        let current = try await table.currentValues(forKeys: items.map(\.accountID))
        var holders: [ApplyColumn: [String: [String]]] = [:]
        for column in mapped where column.isUnique {
            let wanted = items.compactMap { item in item.cells.first { $0.column == column }?.new }
            if !wanted.isEmpty { holders[column] = try await table.holders(of: wanted, in: column) }
        }
        return items.map { item in
            let row = current[item.accountID]
            let cells = item.cells.map { cell in
                var planned = Entry.Cell(column: cell.column, new: cell.new, old: nil, planned: .noAccount, sealed: cell.sealed)
                guard let row, let position = mapped.firstIndex(of: cell.column) else { return planned }
                let value = row[position]
                planned.old = cell.expected ?? value
                if value == cell.new {
                    planned.planned = .already
                } else if cell.expected == nil, cell.column == .email, let value, !ApplyColumn.isRelayAddress(value) {
                    // An address of the user's own: never overwritten, its value never recorded.
                    (planned.planned, planned.old) = (.kept, nil)
                    return planned
                } else {
                    planned.planned = .change
                }
                let others = cell.new.map { (holders[cell.column]?[$0] ?? []).filter { $0 != item.accountID } } ?? []
                if !others.isEmpty, planned.planned != .already {
                    planned.planned = .collision
                    planned.holders = others
                }
                return planned
            }
            return Entry(accountID: item.accountID, transferSub: item.transferSub, cells: cells, keyID: item.keyID)
        }
    }

    /// Of `candidates` (accounts no email cell is planned for), those whose email column holds a
    /// private relay address, read from `table`.
    static func staleAddresses(_ candidates: [StaleAddress], table: any AccountsTable) async throws -> [StaleAddress] {
        guard !candidates.isEmpty, let position = table.mapping.mapped.firstIndex(where: { $0.value == .email }) else { return [] }
        let current = try await table.currentValues(forKeys: candidates.map(\.accountID))
        return candidates.filter { candidate in (current[candidate.accountID]?[position] ?? nil).map(ApplyColumn.isRelayAddress) ?? false }
    }
}

/// An account whose email column holds a private relay address that `apply` does not replace,
/// and why: mail to it stops reaching the user once the app is team B's.
public struct StaleAddress: Sendable, Equatable {
    public enum Reason: String, Sendable {
        /// The user has not migrated (yet): no team B address is known.
        case notMigrated = "not-migrated"
        /// The user migrated, and Apple gave no private relay address (none, or the user's own).
        case noRelayAddress = "no-relay-address"
        /// The user's personal data was erased: their address cannot be opened.
        case erased
    }

    public var accountID: String
    public var transferSub: String?
    public var reason: Reason

    public init(accountID: String, transferSub: String?, reason: Reason) {
        self.accountID = accountID
        self.transferSub = transferSub
        self.reason = reason
    }
}
