@testable import Ledger
@testable import Projections

/// The projection rules folded in memory over a prefix of the log: the reference that the
/// stored versions' "as of" answers must equal.
final class ReferenceFold: ProjectionSnapshot, ProjectionStore {
    private var users: [UInt64: UserState] = [:]
    private var ids: [Identifier: UInt64] = [:]
    private var nextKey: UInt64 = 1
    private var transferWindow: TransferWindow?
    private var folded: UInt64 = 0
    /// Every user key each identifier was ever linked to, and the events each key was written by.
    private var linkHistory: [Identifier: Set<UInt64>] = [:]
    /// The first event that linked each identifier.
    private var firstLinked: [Identifier: UInt64] = [:]
    private var written: [UInt64: [UInt64]] = [:]

    init() {}

    /// Folds one event.
    func fold(_ event: RecordedEvent) throws { try UserFold(store: self).fold(event) }

    func userKey(for identifier: Identifier) throws -> UInt64? { ids[identifier] }
    func link(_ identifier: Identifier, to key: UInt64, at sequence: UInt64) throws {
        ids[identifier] = key
        firstLinked[identifier] = min(firstLinked[identifier] ?? sequence, sequence)
        linkHistory[identifier, default: []].insert(key)
    }
    func user(_ key: UInt64) throws -> UserState? { users[key] }
    func put(_ user: UserState) throws {
        users[user.key] = user
        written[user.key, default: []].append(user.lastSequence)
    }
    func remove(_ key: UInt64, at sequence: UInt64) throws {
        users[key] = nil
        written[key, default: []].append(sequence)
    }
    func allocateUserKey() throws -> UInt64 {
        defer { nextKey += 1 }
        return nextKey
    }
    func setWindow(_ window: TransferWindow) throws { transferWindow = window }
    func setCheckpoint(_ sequence: UInt64) throws { folded = sequence }

    public func user(matching identifier: String) throws -> UserState? { try firstUser(matching: identifier) }
    public func user(with identifier: Identifier) throws -> UserState? { try ids[identifier].flatMap { try user($0) } }

    func withLinkedUsers<T>(_ kind: IdentifierKind, _ body: (any LinkedUsers) throws -> T) throws -> T {
        let links = try ids.keys.filter { $0.kind == kind }.sorted { $0.value.utf8.lexicographicallyPrecedes($1.value.utf8) }.compactMap {
            id -> LinkedUser? in
            guard let key = ids[id], let user = try user(key), let first = firstLinked[id] else { return nil }
            return LinkedUser(value: id.value, firstSequence: first, user: user)
        }
        return try body(LinkedUserList(links))
    }

    public func forEachUser(_ body: (UserState) throws -> Void) throws {
        for key in users.keys.sorted() { try body(users[key]!) }
    }

    func forEachUser(from first: UInt64, _ body: (UserState) throws -> Bool) throws {
        for key in users.keys.sorted() where key >= first {
            guard try body(users[key]!) else { return }
        }
    }

    func forEachMigratedUser(_ body: (UserState) throws -> Void) throws {
        let done = users.values.filter(\.status.isDone)
        for user in done.sorted(by: { (MigratedOrder.time(of: $0)!, $0.key) < (MigratedOrder.time(of: $1)!, $1.key) }) { try body(user) }
    }

    /// The events recorded through `last`, folded.
    static func through(_ last: UInt64, in ledger: Ledger) throws -> ReferenceFold {
        let fold = ReferenceFold()
        try fold.advance(through: last, in: ledger)
        return fold
    }

    /// Folds the events after the last one folded, through `last`: one fold walked along the
    /// log, for a test that compares it at every event.
    func advance(through last: UInt64, in ledger: Ledger) throws {
        guard last > folded else { return }
        try ledger.read { view in try view.forEachEvent(from: folded + 1, through: last) { try fold($0) } }
    }

    func eventSequences(linkedTo identifiers: [Identifier]) throws -> [UInt64] {
        let keys = identifiers.reduce(into: Set<UInt64>()) { $0.formUnion(linkHistory[$1] ?? []) }
        return Set(keys.flatMap { written[$0] ?? [] }).sorted()
    }

    public func window() throws -> TransferWindow? { transferWindow }
    public func checkpoint() throws -> UInt64 { folded }
}

extension ProjectionSnapshot {
    /// The done users, in the order `query migrated` lists them.
    func migratedUsers() throws -> [UserState] {
        var users: [UserState] = []
        try forEachMigratedUser { users.append($0) }
        return users
    }
}
