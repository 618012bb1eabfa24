import LMDB
import Ledger
import LogEngine

/// Projection state read through an LMDB transaction: as committed, or as it stood after
/// event `asOf` (the newest record of each kind at or before that sequence).
struct LMDBProjectionReader: ProjectionSnapshot, UserIndex {
    let transaction: ReadTransaction
    let databases: ProjectionDatabases
    /// The last event of the picture; nil for the projections as committed.
    let asOf: UInt64?

    init(transaction: ReadTransaction, databases: ProjectionDatabases, asOf: UInt64? = nil) {
        self.transaction = transaction
        self.databases = databases
        self.asOf = asOf
    }

    /// The newest sequence a record may carry to belong to this picture.
    private var limit: UInt64 { asOf ?? .max }

    func userKey(for identifier: Identifier) throws -> UInt64? {
        let linkKey = ProjectionDatabases.linkKey(identifier, limit)
        guard let (key, value) = try transaction.lookupCursor(databases.userLinks).seek(atMost: linkKey),
            key.count == linkKey.count, key.starts(with: linkKey.prefix(linkKey.count - 8))
        else { return nil }
        return try BigEndian.uint64(value)
    }

    func user(_ key: UInt64) throws -> UserState? {
        try user(key, in: transaction.lookupCursor(databases.userVersions))
    }

    /// User `key` within the picture, read through a cursor on `user_versions`.
    private func user(_ key: UInt64, in versions: Cursor) throws -> UserState? {
        guard let (found, value) = try versions.seek(atMost: ProjectionDatabases.versionKey(key, limit)),
            try BigEndian.uint64(found) == key, !value.isEmpty
        else { return nil }
        return try UserStateCodec.decode(key: found, value: value)
    }

    func user(matching identifier: String) throws -> UserState? { try firstUser(matching: identifier) }

    /// Walks `user_versions` once, taking for each user its newest version within the
    /// picture and skipping the versions written after it.
    func forEachUser(_ body: (UserState) throws -> Void) throws {
        try forEachUser(from: 0) { user in
            try body(user)
            return true
        }
    }

    func forEachUser(from first: UInt64, _ body: (UserState) throws -> Bool) throws {
        try transaction.withCursor(databases.userVersions) { cursor in
            var entry = try cursor.seek(atLeast: ProjectionDatabases.versionKey(first, 0))
            var current: (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?
            // Hands the user before to `body`; false once `body` asks to stop.
            func emit() throws -> Bool {
                guard let current, !current.value.isEmpty else { return true }
                return try body(try UserStateCodec.decode(key: current.key, value: current.value))
            }
            while let (key, value) = entry {
                let user = try BigEndian.uint64(key)
                if try user != current.map({ try BigEndian.uint64($0.key) }) {
                    guard try emit() else { return }
                    current = nil
                }
                if try BigEndian.uint64(key, at: 8) > limit {
                    entry = user == .max ? nil : try cursor.seek(atLeast: ProjectionDatabases.versionKey(user + 1, 0))
                    continue
                }
                current = (key, value)
                entry = try cursor.next()
            }
            _ = try emit()
        }
    }

    func forEachMigratedUser(_ body: (UserState) throws -> Void) throws {
        try transaction.withCursor(databases.userVersions) { versions in
            try transaction.withCursor(databases.migratedOrder) { cursor in
                var entry = try cursor.first()
                while let (key, value) = entry {
                    if try MigratedOrder.contains(value, limit), let user = try user(BigEndian.uint64(key, at: 8), in: versions), user.status.isDone {
                        try body(user)
                    }
                    entry = try cursor.next()
                }
            }
        }
    }

    func eventSequences(linkedTo identifiers: [Identifier]) throws -> [UInt64] {
        var keys = Set<UInt64>()
        try transaction.withCursor(databases.userLinks) { cursor in
            for identifier in identifiers {
                let prefix = identifier.indexKey + [0]
                var entry = try cursor.seek(atLeast: ProjectionDatabases.linkKey(identifier, 0))
                while let (key, value) = entry, key.count == prefix.count + 8, key.starts(with: prefix),
                    try BigEndian.uint64(key, at: prefix.count) <= limit
                {
                    keys.insert(try BigEndian.uint64(value))
                    entry = try cursor.next()
                }
            }
        }
        var sequences: [UInt64] = []
        try transaction.withCursor(databases.userVersions) { cursor in
            for user in keys {
                var entry = try cursor.seek(atLeast: ProjectionDatabases.versionKey(user, 0))
                while let (key, _) = entry, try BigEndian.uint64(key) == user, try BigEndian.uint64(key, at: 8) <= limit {
                    sequences.append(try BigEndian.uint64(key, at: 8))
                    entry = try cursor.next()
                }
            }
        }
        return Set(sequences).sorted()
    }

    func withLinkedUsers<T>(_ kind: IdentifierKind, _ body: (any LinkedUsers) throws -> T) throws -> T {
        try transaction.withCursor(databases.userLinks) { links in
            try transaction.withCursor(databases.userVersions) { versions in
                try body(LinkCursor(links: links, versions: versions, kind: kind, limit: limit))
            }
        }
    }

    func window() throws -> TransferWindow? {
        try transaction.withCursor(databases.windows) { cursor in
            try cursor.seek(atMost: BigEndian.bytes(limit)).map { try TransferWindow(encoded: $0.value) }
        }
    }

    func checkpoint() throws -> UInt64 {
        let stored = try transaction.get(databases.state, key: ProjectionDatabases.checkpointKey).map { try BigEndian.uint64($0) } ?? 0
        return asOf.map { min($0, stored) } ?? stored
    }
}
