import Ledger

/// Where folded state lives: LMDB inside the ledger's write transaction, or memory for
/// `--as-of` answers. The fold rules (``UserFold``) are written once against this protocol.
protocol ProjectionStore: UserIndex {
    func link(_ identifier: Identifier, to key: UInt64) throws
    func put(_ user: UserState) throws
    func remove(_ key: UInt64) throws
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

/// What queries read: a consistent picture of the projections, now or as of a past time.
public protocol ProjectionSnapshot {
    /// The user an identifier of any kind (account ID, either `sub`, `transfer_sub`) names.
    func user(matching identifier: String) throws -> UserState?
    /// The user holding exactly `identifier` (kind and value).
    func user(with identifier: Identifier) throws -> UserState?
    /// Every user, in key order.
    func forEachUser(_ body: (UserState) throws -> Void) throws
    /// The transfer window, once recorded.
    func window() throws -> TransferWindow?
    /// The last sequence number folded into this picture.
    func checkpoint() throws -> UInt64
}

extension ProjectionSnapshot {
    /// Every user, in key order.
    public func allUsers() throws -> [UserState] {
        var users: [UserState] = []
        try forEachUser { users.append($0) }
        return users
    }
}
