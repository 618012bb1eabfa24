import Ledger

/// Where folded state is written; the fold rules (``UserFold``) are written against this
/// protocol. A user's version is the sequence of the event that wrote it (`lastSequence`).
protocol ProjectionStore: UserIndex {
    /// Links `identifier` to user `key` from event `sequence` on.
    func link(_ identifier: Identifier, to key: UInt64, at sequence: UInt64) throws
    func put(_ user: UserState) throws
    /// Ends user `key` at event `sequence` (merged into another user).
    func remove(_ key: UInt64, at sequence: UInt64) throws
    func allocateUserKey() throws -> UInt64
    func setWindow(_ window: TransferWindow) throws
    func setCheckpoint(_ sequence: UInt64) throws
}

/// Finds users by identifier and by key; shared by the stored and the in-memory projections.
protocol UserIndex {
    func userKey(for identifier: Identifier) throws -> UInt64?
    func user(_ key: UInt64) throws -> UserState?
}

extension UserIndex {
    /// The user an identifier names, trying account ID, sender sub, transfer_sub, recipient sub.
    func firstUser(matching identifier: String) throws -> UserState? {
        for kind in IdentifierKind.userKinds {
            if let key = try userKey(for: Identifier(kind, identifier)) { return try user(key) }
        }
        return nil
    }

    /// The user holding exactly this identifier.
    func user(with identifier: Identifier) throws -> UserState? {
        try userKey(for: identifier).flatMap { try user($0) }
    }
}

/// What queries read: a consistent picture of the projections, now or as of a past time,
/// reached through indexes (never by folding the log).
public protocol ProjectionSnapshot {
    /// The user an identifier of any kind (account ID, either `sub`, `transfer_sub`) names.
    func user(matching identifier: String) throws -> UserState?
    /// The user holding exactly `identifier` (kind and value).
    func user(with identifier: Identifier) throws -> UserState?
    /// Every user, in key order.
    func forEachUser(_ body: (UserState) throws -> Void) throws
    /// The users from key `first` on, in key order, while `body` returns true: a listing read a
    /// page at a time.
    func forEachUser(from first: UInt64, _ body: (UserState) throws -> Bool) throws
    /// Every user whose migration step is done, in the order they migrated (migration time,
    /// or the last attempt's when there is none, then user key).
    func forEachMigratedUser(_ body: (UserState) throws -> Void) throws
    /// The sequence numbers, ascending, of the events folded into every user record any of
    /// `identifiers` has named within the picture: the user's own event list (and those of
    /// users merged into it), read from their stored versions.
    func eventSequences(linkedTo identifiers: [Identifier]) throws -> [UInt64]
    /// Lends `body` the users named by identifiers of `kind`, in the identifiers' byte order.
    func withLinkedUsers<T>(_ kind: IdentifierKind, _ body: (any LinkedUsers) throws -> T) throws -> T
    /// The transfer window, once recorded.
    func window() throws -> TransferWindow?
    /// The last sequence number folded into this picture.
    func checkpoint() throws -> UInt64
}

extension ProjectionSnapshot {
    /// Every user, in key order, collected in memory: for tests and checks on small ledgers.
    /// Commands read with ``forEachUser(_:)`` so their memory does not grow with the ledger.
    public func allUsers() throws -> [UserState] {
        var users: [UserState] = []
        try forEachUser { users.append($0) }
        return users
    }

    /// Every user named by an identifier of `kind`, in the identifiers' byte order, collected
    /// in memory: for tests and checks on small ledgers.
    public func allLinkedUsers(_ kind: IdentifierKind) throws -> [LinkedUser] {
        try withLinkedUsers(kind) { links in
            var all: [LinkedUser] = []
            while let link = try links.next() { all.append(link) }
            return all
        }
    }
}
