import LMDB
import Ledger

/// Projection state as the fold changes it, read from a transaction beneath the changes and
/// gathered as writes for a write transaction to apply (``WriteBatch``): inside that same
/// transaction (a catch-up, a rebuild), or in a later one while the commit before it is
/// flushed (``UserSpeculativeFold``).
///
/// Every write is a new record keyed with the sequence of the event that made it, so earlier
/// pictures stay readable. What it wrote stays readable here, each entry stamped with the
/// sequence that wrote it, until ``forget(through:)`` drops what is committed.
final class LMDBProjectionStore: ProjectionStore, MigratedOrderStore {
    /// A value written here and the sequence of the event that wrote it.
    private struct Stamped<Value> {
        let value: Value
        let sequence: UInt64
    }

    let databases: ProjectionDatabases
    /// The last event folded here; nil before the first.
    private(set) var folded: UInt64?
    private var reader: LMDBProjectionReader?
    /// The transaction folded straight into; nil while gathering writes.
    private var target: WriteTransaction?
    private var writes = WriteBatch()
    /// Users written (nil: merged into another).
    private var users: [UInt64: Stamped<UserState?>] = [:]
    private var links: [Identifier: Stamped<UInt64>] = [:]
    /// `migrated_order` values written (empty: deleted).
    private var order: [[UInt8]: Stamped<[UInt8]>] = [:]
    /// The user-key counter once written, and the last event of the fold that wrote it
    /// (`.max` while the fold changing it runs).
    private var nextKey: Stamped<UInt64>?
    /// The listing time of the user read or written last: the fold reads a user, changes it
    /// and puts it back, so ``put(_:)`` usually needs no second read for the old time.
    private var lastTouched: (key: UInt64, time: Timestamp?)?

    init(databases: ProjectionDatabases) {
        self.databases = databases
    }

    /// Folds `events` reading what is committed from `transaction` beneath what this store
    /// wrote before; returns their writes, the counter and the checkpoint included.
    func fold(_ events: [RecordedEvent], reading transaction: ReadTransaction) throws -> WriteBatch {
        defer { writes = WriteBatch() }
        try fold(events, transaction)
        return writes
    }

    /// Folds `events` straight into `transaction`, which reads back what they wrote: for a
    /// fold inside the write transaction (a catch-up, a rebuild), with nothing kept here.
    func fold(_ events: [RecordedEvent], in transaction: WriteTransaction) throws {
        target = transaction
        defer { target = nil }
        try fold(events, transaction)
    }

    private func fold(_ events: [RecordedEvent], _ transaction: ReadTransaction) throws {
        reader = LMDBProjectionReader(transaction: transaction, databases: databases)
        lastTouched = nil
        defer { reader = nil }
        let fold = UserFold(store: self)
        for event in events { try fold.fold(event) }
        if let last = events.last?.sequence {
            if let next = nextKey, next.sequence == .max {
                nextKey = Stamped(value: next.value, sequence: last)
                try write(databases.state, key: ProjectionDatabases.nextUserKey, value: BigEndian.bytes(next.value))
            }
            try write(databases.state, key: ProjectionDatabases.checkpointKey, value: BigEndian.bytes(last))
            folded = last
        }
    }

    /// Puts `value` under `key`: into the transaction folded in, or gathered.
    private func write(_ database: Database, key: [UInt8], value: [UInt8]) throws {
        if let target { try target.put(database, key: key, value: value) } else { writes.put(database, key: key, value: value) }
    }

    /// Deletes `key` from `database`, the way ``write(_:key:value:)`` puts.
    private func erase(_ database: Database, key: [UInt8]) throws {
        if let target { try target.delete(database, key: key) } else { writes.delete(database, key: key) }
    }

    /// Drops what was written by the events through `sequence`: they are committed, and a
    /// transaction begun from now on reads them.
    func forget(through sequence: UInt64) {
        users = users.filter { $0.value.sequence > sequence }
        links = links.filter { $0.value.sequence > sequence }
        order = order.filter { $0.value.sequence > sequence }
        if let stamped = nextKey, stamped.sequence <= sequence { nextKey = nil }
    }

    private var committed: LMDBProjectionReader {
        guard let reader else { preconditionFailure("LMDBProjectionStore read outside fold(_:reading:)") }
        return reader
    }

    func userKey(for identifier: Identifier) throws -> UInt64? {
        if let written = links[identifier] { return written.value }
        return try committed.userKey(for: identifier)
    }

    func user(_ key: UInt64) throws -> UserState? {
        let user = try users[key].map(\.value) ?? committed.user(key)
        lastTouched = (key, user.flatMap(MigratedOrder.time))
        return user
    }

    /// The listing time user `key` has now.
    private func currentTime(of key: UInt64) throws -> Timestamp? {
        if let lastTouched, lastTouched.key == key { return lastTouched.time }
        return try (users[key].map(\.value) ?? committed.user(key)).flatMap(MigratedOrder.time)
    }

    func link(_ identifier: Identifier, to key: UInt64, at sequence: UInt64) throws {
        if target == nil { links[identifier] = Stamped(value: key, sequence: sequence) }
        try write(databases.userLinks, key: ProjectionDatabases.linkKey(identifier, sequence), value: BigEndian.bytes(key))
    }

    func put(_ user: UserState) throws {
        let sequence = user.lastSequence
        let time = MigratedOrder.time(of: user)
        try reorder(user.key, from: try currentTime(of: user.key), to: time, at: sequence)
        if target == nil { users[user.key] = Stamped(value: user, sequence: sequence) }
        try write(
            databases.userVersions, key: ProjectionDatabases.versionKey(user.key, sequence), value: UserStateCodec.encode(user, sequence: sequence))
        lastTouched = (user.key, time)
    }

    func remove(_ key: UInt64, at sequence: UInt64) throws {
        try reorder(key, from: try currentTime(of: key), to: nil, at: sequence)
        if target == nil { users[key] = Stamped(value: nil, sequence: sequence) }
        try write(databases.userVersions, key: ProjectionDatabases.versionKey(key, sequence), value: [])
        lastTouched = (key, nil)
    }

    func writeOrder(_ key: [UInt8], _ value: [UInt8], at sequence: UInt64) throws {
        if target == nil { order[key] = Stamped(value: value, sequence: sequence) }
        if value.isEmpty { try erase(databases.migratedOrder, key: key) } else { try write(databases.migratedOrder, key: key, value: value) }
    }

    func orderValue(_ key: [UInt8]) throws -> [UInt8] {
        if let written = order[key] { return written.value }
        return try committed.transaction.get(databases.migratedOrder, key: key) ?? []
    }

    func allocateUserKey() throws -> UInt64 {
        let next =
            try nextKey?.value ?? committed.transaction.get(databases.state, key: ProjectionDatabases.nextUserKey).map { try BigEndian.uint64($0) }
            ?? 1
        // User keys are numbered from 1 in fold order: a counter near the top is an altered copy's.
        guard next < UInt64(Int64.max) else {
            throw LedgerError(.malformedRecord, "projection_state.next_user_key is \(next), beyond any fold's count")
        }
        // Stamped again, with the fold's last event, when the fold ends.
        nextKey = Stamped(value: next + 1, sequence: .max)
        // A new user has no version yet, so nothing to look up before its first put.
        lastTouched = (next, nil)
        return next
    }

    func setWindow(_ window: TransferWindow) throws {
        try write(databases.windows, key: BigEndian.bytes(window.sequence), value: window.encoded)
    }

    /// The checkpoint is written once per fold, after its last event (``fold(_:reading:)``,
    /// ``fold(_:in:)``).
    func setCheckpoint(_ sequence: UInt64) throws {}
}
