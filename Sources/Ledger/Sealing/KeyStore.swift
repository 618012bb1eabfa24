import Crypto
import Foundation
import LMDB
import Synchronization

/// Per-user data keys for sealing personal data, kept in their own LMDB environment
/// (`keys/` inside the ledger directory), never in the log.
///
/// Each data subject (a user's own-team `sub`) has one AES-256 key with a random 16-byte
/// ID. Sealed values name the key ID; destroying the key makes every value sealed with it
/// unreadable, which is how a user is erased without touching the hash-chained log.
public final class KeyStore: Sendable {
    private let environment: Environment
    /// Subject index key (identifier tag ‖ value) → key ID (16 bytes).
    private let subjects: Database
    /// Key ID (16 bytes) → AES-256 key (32 bytes).
    private let keys: Database
    private let cache = Mutex<[String: SymmetricKey]>([:])

    /// Opens (creating when writable) the key store in `directory`.
    public init(directory: String, readOnly: Bool = false) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        environment = try Environment(path: directory, options: .init(mapSize: 16 << 20, maxDatabases: 4, readOnly: readOnly))
        subjects = try environment.database("subjects")
        keys = try environment.database("keys")
    }

    /// The key ID and key for `subject`, creating and durably storing one if it has none.
    public func dataKey(for subject: Identifier) throws -> (id: String, key: SymmetricKey) {
        try dataKeys(for: [subject])[0]
    }

    /// Keys for many subjects at once, creating the missing ones in a single transaction.
    public func dataKeys(for subjects: [Identifier]) throws -> [(id: String, key: SymmetricKey)] {
        var found = try environment.read { txn in try subjects.map { try lookup($0, in: txn) } }
        if found.contains(where: { $0 == nil }) {
            found = try environment.write { txn in
                try subjects.map { subject in
                    if let existing = try lookup(subject, in: txn) { return existing }
                    var id = [UInt8](repeating: 0, count: 16)
                    var generator = SystemRandomNumberGenerator()
                    for i in id.indices { id[i] = UInt8.random(in: .min ... .max, using: &generator) }
                    let key = SymmetricKey(size: .bits256)
                    try txn.put(self.subjects, key: subject.indexKey, value: id)
                    _ = try key.withUnsafeBytes { raw in try txn.put(keys, key: id, value: Array(raw)) }
                    return (Hex.encode(id), key)
                }
            }
        }
        return found.map { $0! }
    }

    private func lookup(_ subject: Identifier, in txn: ReadTransaction) throws -> (id: String, key: SymmetricKey)? {
        guard let id = try txn.get(subjects, key: subject.indexKey) else { return nil }
        let hexID = Hex.encode(id)
        if let cached = cache.withLock({ $0[hexID] }) { return (hexID, cached) }
        guard let raw = try txn.get(keys, key: id) else { return nil }
        let key = SymmetricKey(data: raw)
        cache.withLock { $0[hexID] = key }
        return (hexID, key)
    }

    /// The key with ID `keyID`, or nil when it was destroyed.
    public func key(id keyID: String) throws -> SymmetricKey? {
        if let cached = cache.withLock({ $0[keyID] }) { return cached }
        guard let id = Hex.decode(keyID) else { return nil }
        return try environment.read { txn in try txn.get(keys, key: id).map { SymmetricKey(data: $0) } }
    }

    /// Destroys the keys of `subjects`; returns how many existed.
    public func destroyKeys(for subjects: [Identifier]) throws -> Int {
        let destroyed: [String] = try environment.write { txn in
            var ids: [String] = []
            for subject in subjects {
                guard let id = try txn.get(self.subjects, key: subject.indexKey) else { continue }
                try txn.delete(keys, key: id)
                try txn.delete(self.subjects, key: subject.indexKey)
                ids.append(Hex.encode(id))
            }
            return ids
        }
        cache.withLock { cache in for id in destroyed { cache[id] = nil } }
        return destroyed.count
    }
}
