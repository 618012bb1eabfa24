import Basics
import Crypto
import Foundation
import LMDB
import LogEngine
import Logging
import Synchronization

/// Per-user data keys for sealing personal data, kept in their own LMDB environment and slot
/// file (`keys/` inside the ledger directory), never in the log.
///
/// Each data subject (a user's own-team `sub`) has one AES-256 key with a random 16-byte
/// ID. Sealed values name the key ID; destroying the key makes every value sealed with it
/// unreadable, which is how a user is erased without touching the hash-chained log. The key
/// bytes live only in ``KeySlotFile`` slots, overwritten with zeros when destroyed; LMDB maps
/// subjects to key IDs and key IDs to slots (schemas/ledger-format.md, "Key store").
public final class KeyStore: Sendable {
    private let environment: Environment
    /// Subject index key (identifier tag ‖ value) → key ID (16 bytes).
    private let subjects: Database
    /// Key ID (16 bytes) → u64 slot in the slot file.
    /// Nil only in a read-only open of a layout-1 store, which has no slots yet.
    private let slots: Database?
    /// Layout 1: key ID → AES-256 key (32 bytes). Emptied (and the file compacted) by the first
    /// writable open that has the key store to itself.
    private let legacyKeys: Database
    /// `next_slot` (u64), `scrub` (present while destroyed layout-1 keys may remain in free pages).
    /// Nil only in a read-only open of a layout-1 store.
    private let meta: Database?
    private let slotFile: KeySlotFile
    private let cache = Mutex<[String: SymmetricKey]>([:])
    /// Makes the keys that concurrent ``dataKey(for:)`` callers lack, many per transaction.
    private let maker = Mutex<GroupCommitWriter<Identifier, DataKey>?>(nil)

    /// A key ID (lower-case hex) and its key.
    public typealias DataKey = (id: String, key: SymmetricKey)

    private static let nextSlotKey = Array("next_slot".utf8)
    private static let scrubKey = Array("scrub".utf8)
    private static let options = Environment.Options(mapSize: 16 << 20, maxDatabases: 4, fileMode: 0o600)

    /// Opens (creating it if missing) the key store in `directory`. Keys of layout 1 (stored in
    /// LMDB) are read where they are until ``moveLegacyKeys(directory:)`` moves them.
    public init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let slotFile = try KeySlotFile(directory: directory)
        do {
            try slotFile.lockShared()
            environment = try Environment(path: directory, options: KeyStore.options)
            (subjects, slots, legacyKeys, meta) = try KeyStore.databases(in: environment)
        } catch {
            slotFile.close()
            throw error
        }
        self.slotFile = slotFile
    }

    /// Opens the key store in `directory` for reading only, creating and changing nothing (keys
    /// of layout 1 are read where they are); nil when there is none for this user: a copy made
    /// without keys, or a store this user may not read (its files are mode 0600).
    public static func openReadOnly(directory: String) throws -> KeyStore? {
        guard FileManager.default.fileExists(atPath: directory + "/data.mdb") else { return nil }
        do {
            return try KeyStore(readingFrom: directory)
        } catch let error as LedgerError where error.errno == EACCES {
            return nil
        } catch let error as FileError where error.errno == EACCES {
            return nil
        } catch let error as LMDBError where error.code.rawValue == EACCES {
            return nil
        }
    }

    private init(readingFrom directory: String) throws {
        let slotFile = try KeySlotFile(directory: directory, readOnly: true)
        do {
            try slotFile.lockShared()
            var options = KeyStore.options
            options.readOnly = true
            environment = try Environment(path: directory, options: options)
            subjects = try environment.database("subjects")
            legacyKeys = try environment.database("keys")
            // A store of layout 1 has neither yet: its keys are read from `keys`.
            slots = try Self.databaseIfPresent("slots", in: environment)
            meta = try Self.databaseIfPresent("meta", in: environment)
        } catch {
            slotFile.close()
            throw error
        }
        self.slotFile = slotFile
    }

    /// The database `name` of a read-only store, or nil when the store has none.
    private static func databaseIfPresent(_ name: String, in environment: Environment) throws -> Database? {
        do { return try environment.database(name) } catch let error as LMDBError where error.code == .notFound { return nil }
    }

    deinit {
        maker.withLock { $0?.stop() }
        slotFile.close()
    }

    private static func databases(in environment: Environment) throws -> (Database, Database, Database, Database) {
        (try environment.database("subjects"), try environment.database("slots"), try environment.database("keys"), try environment.database("meta"))
    }

    /// Moves the keys of layout 1 in the store in `directory` into slots and compacts its LMDB
    /// file, when no other process has the store open (otherwise a later open does it); true
    /// when it did. A writable open of the ledger runs it before opening the store
    /// (``LedgerUpgrade``).
    static func moveLegacyKeys(directory: String) throws -> Bool {
        guard FileManager.default.fileExists(atPath: directory + "/data.mdb") else { return false }
        let slotFile = try KeySlotFile(directory: directory)
        defer { slotFile.close() }
        try slotFile.lockShared()
        var moved = false
        _ = try slotFile.exclusively { moved = try upgradeIfNeeded(directory: directory, slotFile: slotFile) }
        return moved
    }

    /// Moves layout-1 keys into slots and rewrites the LMDB file without its free pages, so no
    /// copy of a key (live or destroyed) is left in it. Runs only while no other process has
    /// the store open; idempotent, so a crash part-way is finished by the next open.
    /// Returns whether it found work to do.
    private static func upgradeIfNeeded(directory: String, slotFile: KeySlotFile) throws -> Bool {
        guard FileManager.default.fileExists(atPath: directory + "/data.mdb") else { return false }
        let compacted = directory + "/compacting"
        do {
            let environment = try Environment(path: directory, options: options)
            let (_, slots, legacyKeys, meta) = try databases(in: environment)
            let pending = try environment.read { txn in try txn.count(legacyKeys) > 0 || txn.get(meta, key: scrubKey) != nil }
            guard pending else { return false }
            let needed = try environment.write { txn in
                let moved = try txn.withCursor(legacyKeys) { cursor -> [([UInt8], [UInt8])] in
                    var entries: [([UInt8], [UInt8])] = []
                    var entry = try cursor.first()
                    while let (id, key) = entry {
                        entries.append((Array(id), Array(key)))
                        entry = try cursor.next()
                    }
                    return entries
                }
                var next = try nextSlot(meta, in: txn)
                for (id, key) in moved {
                    try slotFile.write(slot: next, id: id, key: key)
                    _ = try txn.put(slots, key: id, value: BigEndian.bytes(next))
                    next += 1
                }
                try slotFile.sync()
                if !moved.isEmpty {
                    try txn.clear(legacyKeys)
                    _ = try txn.put(meta, key: nextSlotKey, value: BigEndian.bytes(next))
                    _ = try txn.put(meta, key: scrubKey, value: [1])
                }
                return try txn.get(meta, key: scrubKey) != nil
            }
            guard needed else { return true }
            // A copy left by an interrupted compaction, if any; creating the directory next fails if it stays.
            try? FileManager.default.removeItem(atPath: compacted)
            try FileManager.default.createDirectory(atPath: compacted, withIntermediateDirectories: false)
            try environment.copy(to: compacted, compact: true)
            chmod(compacted + "/data.mdb", 0o600)
        }
        // The environment is closed here. The copy loses its scrub mark, then replaces the file;
        // a crash before the rename leaves the mark in place, so the next open compacts again.
        do {
            let copy = try Environment(path: compacted, options: options)
            let meta = try copy.database("meta")
            _ = try copy.write { txn in try txn.delete(meta, key: scrubKey) }
        }
        guard rename(compacted + "/data.mdb", directory + "/data.mdb") == 0 else {
            throw LedgerError(.sealing, "could not replace \(directory)/data.mdb with its compacted copy: \(String(cString: strerror(errno)))")
        }
        try FileManager.default.removeItem(atPath: compacted)
        return true
    }

    /// The slot map and meta databases, which every store opened for writing has.
    private func slotDatabases() throws -> (slots: Database, meta: Database) {
        guard let slots, let meta else { throw LedgerError(.readOnly, "the key store at \(environment.path) was opened read-only") }
        return (slots, meta)
    }

    private static func nextSlot(_ meta: Database, in txn: ReadTransaction) throws -> UInt64 {
        try txn.get(meta, key: nextSlotKey).map { try BigEndian.uint64($0) } ?? 0
    }

    /// The key ID and key for `subject`, creating and durably storing one if it has none.
    public func dataKey(for subject: Identifier) throws -> DataKey {
        try dataKeys(for: [subject])[0]
    }

    /// The key ID and key for `subject`; a missing key is made in a transaction shared with
    /// every other caller waiting at the same moment (one slot flush and one commit for all),
    /// as events are group-committed. Returns once the key is durable.
    public func dataKey(for subject: Identifier) async throws -> DataKey {
        if let found = try environment.read({ txn in try lookup(subject, in: txn) }) { return found }
        let maker = self.maker.withLock { maker in
            if let maker { return maker }
            let made = GroupCommitWriter<Identifier, DataKey>(
                name: "handover-key-maker", maximumBatch: 1024, logger: Logger(label: "handover.keys")
            ) { [unowned self] subjects in
                try self.dataKeys(for: Array(subjects))
            }
            maker = made
            return made
        }
        return try await maker.submit([subject])[0]
    }

    /// Keys for many subjects at once, creating the missing ones in a single transaction. The
    /// slot file is flushed while that transaction commits, and both are on disk before the keys
    /// are returned: no event can name a key before then. (Should a crash leave the mapping on
    /// disk without its slot, the slot reads as zeros, which counts as no key, and the subject
    /// gets a new one.)
    public func dataKeys(for subjects: [Identifier]) throws -> [DataKey] {
        do {
            return try makeDataKeys(for: subjects)
        } catch {
            throw LedgerError.classifyingWrite(error, at: environment.path)
        }
    }

    private func makeDataKeys(for subjects: [Identifier]) throws -> [DataKey] {
        var found = try environment.read { txn in try subjects.map { try lookup($0, in: txn) } }
        if found.contains(where: { $0 == nil }) {
            var waitForSlots: (() throws -> Void)?
            let (slots, meta) = try slotDatabases()
            found = try environment.write { txn in
                var next = try KeyStore.nextSlot(meta, in: txn)
                let keys = try subjects.map { subject in
                    if let existing = try lookup(subject, in: txn) { return existing }
                    var id = [UInt8](repeating: 0, count: 16)
                    var generator = SystemRandomNumberGenerator()
                    for i in id.indices { id[i] = UInt8.random(in: .min ... .max, using: &generator) }
                    let key = SymmetricKey(size: .bits256)
                    try key.withUnsafeBytes { raw in try slotFile.write(slot: next, id: id, key: Array(raw)) }
                    _ = try txn.put(slots, key: id, value: BigEndian.bytes(next))
                    _ = try txn.put(self.subjects, key: subject.indexKey, value: id)
                    next += 1
                    return (id: Hex.encode(id), key: key)
                }
                _ = try txn.put(meta, key: KeyStore.nextSlotKey, value: BigEndian.bytes(next))
                try waitForSlots?()
                waitForSlots = slotFile.startSync()
                return keys
            }
            try waitForSlots?()
        }
        return found.map { $0! }
    }

    private func lookup(_ subject: Identifier, in txn: ReadTransaction) throws -> DataKey? {
        guard let id = try txn.get(subjects, key: subject.indexKey) else { return nil }
        let hexID = Hex.encode(id)
        if let cached = cache.withLock({ $0[hexID] }) { return (hexID, cached) }
        guard let key = try key(id: id, in: txn) else { return nil }
        cache.withLock { $0[hexID] = key }
        return (hexID, key)
    }

    private func key(id: [UInt8], in txn: ReadTransaction) throws -> SymmetricKey? {
        if let slots, let slot = try txn.get(slots, key: id) {
            return try slotFile.key(at: BigEndian.uint64(slot), id: id).map { SymmetricKey(data: $0) }
        }
        return try txn.get(legacyKeys, key: id).map { SymmetricKey(data: $0) }
    }

    /// The keys of `keyIDs` that exist, by ID, looked up in one read of the store: for
    /// opening many values at once. A destroyed or unknown key is missing from the answer.
    public func keys(ids keyIDs: some Sequence<String>) throws -> [String: SymmetricKey] {
        try environment.read { txn in
            var found: [String: SymmetricKey] = [:]
            for keyID in keyIDs where found[keyID] == nil {
                found[keyID] = try key(id: keyID, in: txn)
            }
            return found
        }
    }

    /// The key with ID `keyID`, or nil when it was destroyed.
    public func key(id keyID: String) throws -> SymmetricKey? {
        if let cached = cache.withLock({ $0[keyID] }) { return cached }
        return try environment.read { txn in try key(id: keyID, in: txn) }
    }

    /// The key with hex ID `keyID`, from the cache or read in `txn`; nil when it was destroyed.
    private func key(id keyID: String, in txn: ReadTransaction) throws -> SymmetricKey? {
        if let cached = cache.withLock({ $0[keyID] }) { return cached }
        guard let id = Hex.decode(keyID) else { return nil }
        return try key(id: id, in: txn)
    }

    /// Writes a consistent copy of the key store to the new directory `directory`: the LMDB
    /// file compacted (no free pages), and a slot file holding only the slots the copy maps,
    /// read after the copy was taken (a key destroyed meanwhile is copied as destroyed).
    /// Returns the number of keys the copy holds.
    public func copy(to directory: String) throws -> Int {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try environment.copy(to: directory, compact: true)
        chmod(directory + "/data.mdb", 0o600)
        let copy = try Environment(path: directory, options: KeyStore.options)
        let (subjects, slots, _, _) = try KeyStore.databases(in: copy)
        let target = try KeySlotFile(directory: directory)
        defer { target.close() }
        let count = try copy.read { txn in
            try txn.withCursor(slots) { cursor in
                var entry = try cursor.first()
                while let (id, slot) = entry {
                    let number = try BigEndian.uint64(slot)
                    if let key = try slotFile.key(at: number, id: Array(id)) { try target.write(slot: number, id: Array(id), key: key) }
                    entry = try cursor.next()
                }
            }
            return try txn.count(subjects)
        }
        try target.sync()
        return count
    }

    /// Destroys the keys of `subjects`; returns how many existed. A key's slot is overwritten
    /// with zeros and flushed before the transaction that unmaps it commits.
    public func destroyKeys(for subjects: [Identifier]) throws -> Int {
        do {
            return try destroy(subjects)
        } catch {
            throw LedgerError.classifyingWrite(error, at: environment.path)
        }
    }

    private func destroy(_ subjects: [Identifier]) throws -> Int {
        let (slots, meta) = try slotDatabases()
        let destroyed: [String] = try environment.write { txn in
            var ids: [String] = []
            var zeroed: [UInt64] = []
            for subject in subjects {
                guard let id = try txn.get(self.subjects, key: subject.indexKey) else { continue }
                if let slot = try txn.get(slots, key: id) {
                    zeroed.append(try BigEndian.uint64(slot))
                    _ = try txn.delete(slots, key: id)
                }
                if try txn.delete(legacyKeys, key: id) {
                    // A layout-1 key's bytes stay in a free page until the file is compacted.
                    _ = try txn.put(meta, key: KeyStore.scrubKey, value: [1])
                }
                _ = try txn.delete(self.subjects, key: subject.indexKey)
                ids.append(Hex.encode(id))
            }
            try slotFile.destroy(zeroed)
            return ids
        }
        cache.withLock { cache in for id in destroyed { cache[id] = nil } }
        return destroyed.count
    }
}
