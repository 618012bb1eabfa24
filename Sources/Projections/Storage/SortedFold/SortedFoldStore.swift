import LMDB
import Ledger

/// The databases of a sorted fold's working state, in its scratch environment: what the fold
/// reads back (each identifier's user, each user's current record), and the two small tables
/// it keeps whole (`migrated_order` and `windows`, read out in key order at the end).
struct WorkingTables {
    /// Identifier tag ‖ value → the user key it names now.
    let links: Database
    /// User key → the `user_versions` key and value of its current record (absent: merged away).
    let users: Database
    /// As `migrated_order` in a generation.
    let order: Database
    /// As `windows` in a generation.
    let windows: Database

    init(in transaction: ReadTransaction) throws {
        links = try transaction.openDatabase("links", create: true)
        users = try transaction.openDatabase("users", create: true)
        order = try transaction.openDatabase("order", create: true)
        windows = try transaction.openDatabase("windows", create: true)
    }
}

/// Where a sorted fold (``SortedFold``) writes: the fold's current state in a working
/// transaction, which it reads back, and every record of the history (`user_versions` and
/// `user_links`, keyed with the sequence that wrote them) to a ``RunBuffer``, never read
/// until the runs are merged. Writes what ``LMDBProjectionStore`` writes, entry for entry.
final class SortedFoldStore: ProjectionStore, MigratedOrderStore {
    private let tables: WorkingTables
    private let transaction: WriteTransaction
    private let runs: RunBuffer
    /// The key the next new user gets.
    private(set) var nextUserKey: UInt64
    /// The listing time of the user read or written last (as in ``LMDBProjectionStore``).
    private var lastTouched: (key: UInt64, time: Timestamp?)?

    init(tables: WorkingTables, transaction: WriteTransaction, runs: RunBuffer, nextUserKey: UInt64) {
        self.tables = tables
        self.transaction = transaction
        self.runs = runs
        self.nextUserKey = nextUserKey
    }

    /// Folds `events` in order.
    func fold(_ events: [RecordedEvent]) throws {
        lastTouched = nil
        let fold = UserFold(store: self)
        for event in events { try fold.fold(event) }
    }

    func userKey(for identifier: Identifier) throws -> UInt64? {
        try transaction.get(tables.links, key: identifier.indexKey).map { try BigEndian.uint64($0) }
    }

    func user(_ key: UInt64) throws -> UserState? {
        let user = try storedUser(key)
        lastTouched = (key, user.flatMap(MigratedOrder.time))
        return user
    }

    private func storedUser(_ key: UInt64) throws -> UserState? {
        try BigEndian.bytes(key).withUnsafeBytes { key in
            guard let stored = try transaction.get(tables.users, key: key), stored.count > 16 else { return nil }
            return try UserStateCodec.decode(
                key: UnsafeRawBufferPointer(rebasing: stored[..<16]), value: UnsafeRawBufferPointer(rebasing: stored[16...]))
        }
    }

    private func currentTime(of key: UInt64) throws -> Timestamp? {
        if let lastTouched, lastTouched.key == key { return lastTouched.time }
        return try storedUser(key).flatMap(MigratedOrder.time)
    }

    func link(_ identifier: Identifier, to key: UInt64, at sequence: UInt64) throws {
        let value = BigEndian.bytes(key)
        try transaction.put(tables.links, key: identifier.indexKey, value: value)
        runs.add(.userLinks, key: ProjectionDatabases.linkKey(identifier, sequence), value: value)
    }

    func put(_ user: UserState) throws {
        let sequence = user.lastSequence
        let time = MigratedOrder.time(of: user)
        try reorder(user.key, from: try currentTime(of: user.key), to: time, at: sequence)
        let versionKey = ProjectionDatabases.versionKey(user.key, sequence)
        let value = UserStateCodec.encode(user, sequence: sequence)
        runs.add(.userVersions, key: versionKey, value: value)
        try transaction.put(tables.users, key: BigEndian.bytes(user.key), value: versionKey + value)
        lastTouched = (user.key, time)
    }

    func remove(_ key: UInt64, at sequence: UInt64) throws {
        try reorder(key, from: try currentTime(of: key), to: nil, at: sequence)
        runs.add(.userVersions, key: ProjectionDatabases.versionKey(key, sequence), value: [])
        try transaction.delete(tables.users, key: BigEndian.bytes(key))
        lastTouched = (key, nil)
    }

    func writeOrder(_ key: [UInt8], _ value: [UInt8], at sequence: UInt64) throws {
        if value.isEmpty { try transaction.delete(tables.order, key: key) } else { try transaction.put(tables.order, key: key, value: value) }
    }

    func orderValue(_ key: [UInt8]) throws -> [UInt8] {
        try transaction.get(tables.order, key: key) ?? []
    }

    func allocateUserKey() throws -> UInt64 {
        let key = nextUserKey
        nextUserKey += 1
        lastTouched = (key, nil)
        return key
    }

    func setWindow(_ window: TransferWindow) throws {
        try transaction.put(tables.windows, key: BigEndian.bytes(window.sequence), value: window.encoded)
    }

    /// The checkpoint is the fold's head (``SortedFold/state``).
    func setCheckpoint(_ sequence: UInt64) throws {}
}
