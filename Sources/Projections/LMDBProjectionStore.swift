import LMDB
import Ledger

/// The projection databases inside the ledger's environment.
public struct ProjectionDatabases: Sendable {
    /// User key (u64 BE) → ``UserState`` (binary, see ledger-format.md).
    public let users: Database
    /// Identifier tag ‖ value → user key (u64 BE).
    public let userIDs: Database
    /// `checkpoint`, `next_user_key`, `window`.
    public let meta: Database

    static let names = ["users", "user_ids", "projection_meta"]
    static let checkpointKey = Array("checkpoint".utf8)
    static let nextUserKey = Array("next_user_key".utf8)
    static let windowKey = Array("window".utf8)

    init(_ dbs: [Database]) {
        users = dbs[0]
        userIDs = dbs[1]
        meta = dbs[2]
    }
}

/// Projection state read through an LMDB transaction.
struct LMDBProjectionReader: ProjectionSnapshot, UserIndex {
    let transaction: ReadTransaction
    let databases: ProjectionDatabases

    func userKey(for identifier: Identifier) throws -> UInt64? {
        try identifier.indexKey.withUnsafeBytes { key in
            try transaction.get(databases.userIDs, key: key).map { BigEndian.uint64($0) }
        }
    }

    func user(_ key: UInt64) throws -> UserState? {
        try BigEndian.bytes(key).withUnsafeBytes { k in
            try transaction.get(databases.users, key: k).map(UserStateCodec.decode)
        }
    }

    func user(matching identifier: String) throws -> UserState? { try firstUser(matching: identifier) }

    func forEachUser(_ body: (UserState) throws -> Void) throws {
        try transaction.withCursor(databases.users) { cursor in
            var entry = try cursor.first()
            while let (_, value) = entry {
                try body(try UserStateCodec.decode(value))
                entry = try cursor.next()
            }
        }
    }

    func window() throws -> TransferWindow? {
        try ProjectionDatabases.windowKey.withUnsafeBytes { k in
            try transaction.get(databases.meta, key: k).map(TransferWindow.init(encoded:))
        }
    }

    func checkpoint() throws -> UInt64 {
        try ProjectionDatabases.checkpointKey.withUnsafeBytes { k in
            try transaction.get(databases.meta, key: k).map { BigEndian.uint64($0) } ?? 0
        }
    }
}

/// Projection state written inside the ledger's write transaction. The user-key counter and
/// the checkpoint are kept in memory during one fold and written once by ``finish()``.
final class LMDBProjectionStore: ProjectionStore {
    let transaction: WriteTransaction
    let databases: ProjectionDatabases
    private var nextKey: UInt64?
    private var checkpoint: UInt64?

    init(transaction: WriteTransaction, databases: ProjectionDatabases) {
        self.transaction = transaction
        self.databases = databases
    }

    var reader: LMDBProjectionReader { LMDBProjectionReader(transaction: transaction, databases: databases) }

    func userKey(for identifier: Identifier) throws -> UInt64? { try reader.userKey(for: identifier) }
    func user(_ key: UInt64) throws -> UserState? { try reader.user(key) }

    func link(_ identifier: Identifier, to key: UInt64) throws {
        try transaction.put(databases.userIDs, key: identifier.indexKey, value: BigEndian.bytes(key))
    }

    func put(_ user: UserState) throws {
        try transaction.put(databases.users, key: BigEndian.bytes(user.key), value: UserStateCodec.encode(user))
    }

    func remove(_ key: UInt64) throws { try transaction.delete(databases.users, key: BigEndian.bytes(key)) }

    func allocateUserKey() throws -> UInt64 {
        let next = try nextKey ?? transaction.get(databases.meta, key: ProjectionDatabases.nextUserKey).map { BigEndian.uint64($0) } ?? 1
        nextKey = next + 1
        return next
    }

    func setWindow(_ window: TransferWindow) throws {
        try transaction.put(databases.meta, key: ProjectionDatabases.windowKey, value: window.encoded)
    }

    func setCheckpoint(_ sequence: UInt64) throws { checkpoint = sequence }

    /// Writes the counter and checkpoint kept during the fold.
    func finish() throws {
        if let nextKey { try transaction.put(databases.meta, key: ProjectionDatabases.nextUserKey, value: BigEndian.bytes(nextKey)) }
        if let checkpoint { try transaction.put(databases.meta, key: ProjectionDatabases.checkpointKey, value: BigEndian.bytes(checkpoint)) }
    }
}
