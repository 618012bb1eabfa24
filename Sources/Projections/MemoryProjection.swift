import Ledger

/// Projections folded in memory, for answers "as of" a past moment: the same rules as the
/// stored projections, applied to the events recorded up to that moment.
public final class MemoryProjection: ProjectionSnapshot, ProjectionStore {
    private var users: [UInt64: UserState] = [:]
    private var ids: [Identifier: UInt64] = [:]
    private var nextKey: UInt64 = 1
    private var transferWindow: TransferWindow?
    private var folded: UInt64 = 0

    public init() {}

    /// Folds one event.
    public func fold(_ event: RecordedEvent) throws { try UserFold(store: self).fold(event) }

    func userKey(for identifier: Identifier) throws -> UInt64? { ids[identifier] }
    func link(_ identifier: Identifier, to key: UInt64) throws { ids[identifier] = key }
    func user(_ key: UInt64) throws -> UserState? { users[key] }
    func put(_ user: UserState) throws { users[user.key] = user }
    func remove(_ key: UInt64) throws { users[key] = nil }
    func allocateUserKey() throws -> UInt64 {
        defer { nextKey += 1 }
        return nextKey
    }
    func setWindow(_ window: TransferWindow) throws { transferWindow = window }
    func setCheckpoint(_ sequence: UInt64) throws { folded = sequence }

    public func user(matching identifier: String) throws -> UserState? { try firstUser(matching: identifier) }
    public func user(with identifier: Identifier) throws -> UserState? { try ids[identifier].flatMap { try user($0) } }

    public func forEachUser(_ body: (UserState) throws -> Void) throws {
        for key in users.keys.sorted() { try body(users[key]!) }
    }

    public func window() throws -> TransferWindow? { transferWindow }
    public func checkpoint() throws -> UInt64 { folded }
}
