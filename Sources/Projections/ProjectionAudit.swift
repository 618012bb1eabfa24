import Foundation
import LMDB
import Ledger

/// Checks the projections every answer comes from against what the log implies: the log is
/// folded again into a scratch environment outside the ledger, then each projection database
/// (user records, identifier links, `migrated_order`, windows, the fold's state) is compared
/// with the ledger's entry by entry. Reads the ledger only, in one read transaction, so a
/// writer appending meanwhile changes nothing it compares; memory stays that of one chunk of
/// events.
public enum ProjectionAudit {
    /// Where the stored projections differ from the log's: the database, the entry and what
    /// is wrong.
    public struct Mismatch: Sendable, CustomStringConvertible {
        /// The database's name (`user_versions`, `user_links`, ...).
        public var database: String
        /// The entry, decoded (user key, sequence, identifier).
        public var entry: String
        /// What differs.
        public var problem: String

        public var description: String { "\(database), \(entry): \(problem)" }
    }

    /// Folds the log through its head into a fresh projection in `scratch` (a directory that
    /// must not exist yet, removed by the caller; ``ScratchFold``), `chunk` events per transaction, then compares; nil when every
    /// entry agrees. `progress` hears the events folded so far.
    public static func run(
        ledger: Ledger, projection: UserProjection, scratch: String, chunk: UInt64 = ScratchFold.eventsPerTransaction,
        progress: ((UInt64) -> Void)? = nil
    ) throws -> Mismatch? {
        let reference = try ScratchFold(directory: scratch, for: ledger.environment, schema: ledger.schema)
        return try ledger.read { view in
            // The log only grows, so events read in other transactions are this one's events.
            try reference.fold(
                through: try view.head().sequence, chunk: chunk,
                events: { range in
                    try ledger.read { try $0.events(range) }
                }, progress: progress)
            let stored = try projection.databases(in: view.transaction)
            return try reference.read { txn, expected in
                let pairs = [
                    ("user_versions", stored.userVersions, expected.userVersions), ("user_links", stored.userLinks, expected.userLinks),
                    ("migrated_order", stored.migratedOrder, expected.migratedOrder), ("windows", stored.windows, expected.windows),
                ]
                for (name, a, b) in pairs {
                    if let mismatch = try compare(name, a, in: view.transaction, with: b, in: txn) { return mismatch }
                }
                for key in [ProjectionDatabases.checkpointKey, ProjectionDatabases.nextUserKey] {
                    let a = try view.transaction.get(stored.state, key: key).map(Array.init)
                    let b = try txn.get(expected.state, key: key).map(Array.init)
                    if a != b {
                        return Mismatch(
                            database: "projection_state", entry: String(decoding: key, as: UTF8.self),
                            problem: "stored \(a.map(describeNumber) ?? "nothing"), the log implies \(b.map(describeNumber) ?? "nothing")")
                    }
                }
                return nil
            }
        }
    }

    /// Walks both databases in key order; the first entry present in one only, or with another
    /// value, is the mismatch.
    private static func compare(
        _ name: String, _ stored: Database, in a: ReadTransaction, with expected: Database, in b: ReadTransaction
    ) throws -> Mismatch? {
        try a.withCursor(stored) { left in
            try b.withCursor(expected) { right in
                var l = try left.first()
                var r = try right.first()
                while l != nil || r != nil {
                    if let (lk, lv) = l, let (rk, rv) = r, lk.elementsEqual(rk) {
                        if !lv.elementsEqual(rv), !(name == "user_versions" && sameUser(key: lk, stored: lv, expected: rv)) {
                            return Mismatch(
                                database: name, entry: describe(name, Array(lk)),
                                problem: "the stored value differs from the one the log implies (\(lv.count) bytes, expected \(rv.count))")
                        }
                        l = try left.next()
                        r = try right.next()
                        continue
                    }
                    // The smaller key is the one the other side lacks.
                    if let (lk, _) = l, r == nil || lk.lexicographicallyPrecedes(r!.key) {
                        return Mismatch(database: name, entry: describe(name, Array(lk)), problem: "stored, but the log implies no such entry")
                    }
                    return Mismatch(database: name, entry: describe(name, Array(r!.key)), problem: "missing: the log implies this entry")
                }
                return nil
            }
        }
    }

    /// Whether a `user_versions` value written in an older record version holds the user the
    /// log implies: a ledger written before user record version 2 keeps version 1 records
    /// until a rebuild, and they differ from the fold's bytes without being wrong.
    private static func sameUser(key: UnsafeRawBufferPointer, stored: UnsafeRawBufferPointer, expected: UnsafeRawBufferPointer) -> Bool {
        guard stored.first != expected.first, let a = try? UserStateCodec.decode(key: key, value: stored),
            let b = try? UserStateCodec.decode(key: key, value: expected)
        else { return false }
        return a == b
    }

    /// A key of `database` in words.
    private static func describe(_ database: String, _ key: [UInt8]) -> String {
        switch database {
        case "user_versions" where key.count == 16:
            return "user \(number(key)), sequence \(number(key, at: 8))"
        case "user_links" where key.count > 10:
            let identifier = key.dropFirst().dropLast(9)
            return
                "identifier \(InertText.forScreen(String(decoding: identifier, as: UTF8.self))) (tag \(key[0])), from sequence \(number(key, at: key.count - 8))"
        case "migrated_order" where key.count == 16:
            return "listing time key \(Hex.encode(Array(key[0..<8]))), user \(number(key, at: 8))"
        case "windows" where key.count == 8:
            return "window of sequence \(number(key))"
        default:
            return "key \(Hex.encode(key))"
        }
    }

    private static func describeNumber(_ bytes: [UInt8]) -> String {
        bytes.count == 8 ? number(bytes) : Hex.encode(bytes)
    }

    /// The big-endian number at `offset` of a key, in decimal; its bytes in hex when it has none there.
    private static func number(_ bytes: [UInt8], at offset: Int = 0) -> String {
        (try? BigEndian.uint64(bytes, at: offset)).map { String($0) } ?? Hex.encode(bytes)
    }
}
