import LMDB
import Ledger

/// Projection state written inside the ledger's write transaction. Every write is a new
/// record keyed with the sequence of the event that made it, so earlier pictures stay
/// readable; the user-key counter and the checkpoint are kept in memory during one fold and
/// written once by ``finish()``.
final class LMDBProjectionStore: ProjectionStore {
    let transaction: WriteTransaction
    let databases: ProjectionDatabases
    private var nextKey: UInt64?
    private var checkpoint: UInt64?
    /// The listing time of the user read or written last: the fold reads a user, changes it
    /// and puts it back, so ``put(_:)`` usually needs no second read for the old time.
    private var lastTouched: (key: UInt64, time: Timestamp?)?

    init(transaction: WriteTransaction, databases: ProjectionDatabases) {
        self.transaction = transaction
        self.databases = databases
    }

    private var reader: LMDBProjectionReader { LMDBProjectionReader(transaction: transaction, databases: databases) }

    func userKey(for identifier: Identifier) throws -> UInt64? { try reader.userKey(for: identifier) }
    func user(_ key: UInt64) throws -> UserState? {
        let user = try reader.user(key)
        lastTouched = (key, user.flatMap(MigratedOrder.time))
        return user
    }

    /// The listing time user `key` has now.
    private func currentTime(of key: UInt64) throws -> Timestamp? {
        if let lastTouched, lastTouched.key == key { return lastTouched.time }
        return try reader.user(key).flatMap(MigratedOrder.time)
    }

    func link(_ identifier: Identifier, to key: UInt64, at sequence: UInt64) throws {
        try transaction.put(databases.userLinks, key: ProjectionDatabases.linkKey(identifier, sequence), value: BigEndian.bytes(key))
    }

    func put(_ user: UserState) throws {
        let sequence = user.lastSequence
        let time = MigratedOrder.time(of: user)
        try reorder(user.key, from: try currentTime(of: user.key), to: time, at: sequence)
        try transaction.put(databases.userVersions, key: ProjectionDatabases.versionKey(user.key, sequence), value: UserStateCodec.encode(user, sequence: sequence))
        lastTouched = (user.key, time)
    }

    func remove(_ key: UInt64, at sequence: UInt64) throws {
        try reorder(key, from: try currentTime(of: key), to: nil, at: sequence)
        try transaction.put(databases.userVersions, key: ProjectionDatabases.versionKey(key, sequence), value: [])
        lastTouched = (key, nil)
    }

    /// Moves a user's `migrated_order` entry when the time it is listed by changes.
    private func reorder(_ user: UInt64, from old: Timestamp?, to new: Timestamp?, at sequence: UInt64) throws {
        guard old != new else { return }
        if let old {
            let key = ProjectionDatabases.orderKey(old, user)
            let value = MigratedOrder.closing(try transaction.get(databases.migratedOrder, key: key) ?? [], at: sequence)
            if value.isEmpty { try transaction.delete(databases.migratedOrder, key: key) } else { try transaction.put(databases.migratedOrder, key: key, value: value) }
        }
        if let new {
            let key = ProjectionDatabases.orderKey(new, user)
            try transaction.put(databases.migratedOrder, key: key, value: MigratedOrder.opening(try transaction.get(databases.migratedOrder, key: key) ?? [], at: sequence))
        }
    }

    func allocateUserKey() throws -> UInt64 {
        let next = try nextKey ?? transaction.get(databases.state, key: ProjectionDatabases.nextUserKey).map { BigEndian.uint64($0) } ?? 1
        nextKey = next + 1
        // A new user has no version yet, so nothing to look up before its first put.
        lastTouched = (next, nil)
        return next
    }

    func setWindow(_ window: TransferWindow) throws {
        try transaction.put(databases.windows, key: BigEndian.bytes(window.sequence), value: window.encoded)
    }

    func setCheckpoint(_ sequence: UInt64) throws { checkpoint = sequence }

    /// Writes the counter and checkpoint kept during the fold.
    func finish() throws {
        if let nextKey { try transaction.put(databases.state, key: ProjectionDatabases.nextUserKey, value: BigEndian.bytes(nextKey)) }
        if let checkpoint { try transaction.put(databases.state, key: ProjectionDatabases.checkpointKey, value: BigEndian.bytes(checkpoint)) }
    }
}
