import Basics
import LMDB
import Ledger
import LogEngine

/// Projection state as the fold changes it, folded straight into a write transaction (a group
/// commit, a catch-up, a rebuild's tail), which reads back what the fold wrote.
///
/// Every write is a new record keyed with the sequence of the event that made it, so earlier
/// pictures stay readable.
final class LMDBProjectionStore: ProjectionStore, MigratedOrderStore {
    let databases: ProjectionDatabases
    private let transaction: WriteTransaction
    private let reader: LMDBProjectionReader
    /// The user-key counter once a new user took a key: written once, when the fold ends.
    private var nextKey: UInt64?
    /// The listing time of the user read or written last: the fold reads a user, changes it
    /// and puts it back, so ``put(_:)`` usually needs no second read for the old time.
    private var lastTouched: (key: UInt64, time: Timestamp?)?

    /// A store over `databases` that folds into `transaction`.
    init(databases: ProjectionDatabases, in transaction: WriteTransaction) {
        self.databases = databases
        self.transaction = transaction
        self.reader = LMDBProjectionReader(transaction: transaction, databases: databases)
    }

    /// Folds `events` (consecutive, ascending) by ``UserFold``'s rules, then writes the counter
    /// and the checkpoint.
    func fold(_ events: [RecordedEvent]) throws {
        let fold = UserFold(store: self)
        for event in events { try fold.fold(event) }
        guard let last = events.last?.sequence else { return }
        if let nextKey { try transaction.put(databases.state, key: ProjectionDatabases.nextUserKey, value: BigEndian.bytes(nextKey)) }
        try transaction.put(databases.state, key: ProjectionDatabases.checkpointKey, value: BigEndian.bytes(last))
    }

    func userKey(for identifier: Identifier) throws -> UInt64? {
        try reader.userKey(for: identifier)
    }

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
        try transaction.put(
            databases.userVersions, key: ProjectionDatabases.versionKey(user.key, sequence), value: UserStateCodec.encode(user, sequence: sequence))
        lastTouched = (user.key, time)
    }

    func remove(_ key: UInt64, at sequence: UInt64) throws {
        try reorder(key, from: try currentTime(of: key), to: nil, at: sequence)
        try transaction.put(databases.userVersions, key: ProjectionDatabases.versionKey(key, sequence), value: [])
        lastTouched = (key, nil)
    }

    func writeOrder(_ key: [UInt8], _ value: [UInt8], at sequence: UInt64) throws {
        if value.isEmpty {
            try transaction.delete(databases.migratedOrder, key: key)
        } else {
            try transaction.put(databases.migratedOrder, key: key, value: value)
        }
    }

    func orderValue(_ key: [UInt8]) throws -> [UInt8] {
        try transaction.get(databases.migratedOrder, key: key) ?? []
    }

    func allocateUserKey() throws -> UInt64 {
        let next = try nextKey ?? transaction.get(databases.state, key: ProjectionDatabases.nextUserKey).map { try BigEndian.uint64($0) } ?? 1
        // User keys are numbered from 1 in fold order: a counter near the top is an altered copy's.
        guard next < UInt64(Int64.max) else {
            throw LedgerError(.malformedRecord, "projection_state.next_user_key is \(next), beyond any fold's count")
        }
        nextKey = next + 1
        // A new user has no version yet, so nothing to look up before its first put.
        lastTouched = (next, nil)
        return next
    }

    func setWindow(_ window: TransferWindow) throws {
        try transaction.put(databases.windows, key: BigEndian.bytes(window.sequence), value: window.encoded)
    }

    /// The checkpoint is written once per fold, after its last event (``fold(_:)``).
    func setCheckpoint(_ sequence: UInt64) throws {}
}
