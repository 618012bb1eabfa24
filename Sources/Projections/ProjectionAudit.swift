import Basics
import Foundation
import LMDB
import Ledger
import LogEngine

/// Checks the projections every answer comes from against what the log implies: the log is
/// folded again with its output sorted (``SortedFold``), and the sorted entries are compared,
/// as they are merged, with each projection database (user records, identifier links,
/// `migrated_order`, windows, the fold's state) walked in key order: no second copy of the
/// projections is stored. Reads the ledger only, in one read transaction, so a writer
/// appending meanwhile changes nothing it compares; memory stays bounded by the fold's run
/// budget and one chunk of events.
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

    /// Events the fold reads and folds at a time, by default (the next chunk is read beside).
    public static let eventsPerFoldTransaction: UInt64 = 16_384

    /// Folds the log through its head in `scratch` (a directory that must not exist yet, or one
    /// a killed fold left; by default a new one in the temporary directory; removed before
    /// returning), `chunk` events at a time, in `foldMemory` bytes (``SortedFold``), then
    /// compares; nil when every entry agrees. `progress` hears the events folded so far;
    /// `alsoReading` is lent each chunk of events as read (in order, rows not attached, on the
    /// thread reading beside the fold), for another check to share the reading.
    public static func run(
        ledger: Ledger, projection: UserProjection, scratch: String? = nil, chunk: UInt64 = eventsPerFoldTransaction,
        foldMemory: Int = UserProjection.defaultFoldMemory, progress: ((UInt64) -> Void)? = nil,
        alsoReading: (@Sendable (LogView, [RecordedEvent]) throws -> Void)? = nil
    ) throws -> Mismatch? {
        let fold = try SortedFold(
            directory: scratch ?? ScratchDirectory.temporaryPath(for: "verify"), for: ledger.environment, schema: ledger.schema, memory: foldMemory)
        defer { fold.remove() }
        return try ledger.read { view in
            // The log only grows, so events read in other transactions are this one's events.
            try fold.fold(
                through: try view.head().sequence, chunk: chunk,
                events: { range in
                    try ledger.read { view in
                        let events = try view.events(range)
                        try alsoReading?(view, events)
                        return events
                    }
                }, progress: progress)
            let stored = try projection.databases(in: view.transaction)
            if let mismatch = try fold.withEntries({ try compare(stored, in: view.transaction, with: $0) }) { return mismatch }
            let expected = Dictionary(fold.stateEntries.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
            for key in [ProjectionDatabases.checkpointKey, ProjectionDatabases.nextUserKey] {
                let a = try view.transaction.get(stored.state, key: key).map(Array.init)
                let b = expected[key]
                if a != b {
                    return Mismatch(
                        database: "projection_state", entry: String(decoding: key, as: UTF8.self),
                        problem: "stored \(a.map(describeNumber) ?? "nothing"), the log implies \(b.map(describeNumber) ?? "nothing")")
                }
            }
            return nil
        }
    }

    /// Walks each stored database in key order beside the folded entries of its table; the
    /// first entry present on one side only, or with another value, is the mismatch.
    private static func compare(_ stored: ProjectionDatabases, in transaction: ReadTransaction, with folded: FoldedEntries) throws -> Mismatch? {
        var r = try folded.next()
        for table in ProjectionTable.allCases {
            let name = table.name
            let mismatch: Mismatch? = try transaction.withCursor(stored.database(table)) { left in
                var l = try left.first()
                while true {
                    let right = r.flatMap { $0.table == table ? ($0.key, $0.value) : nil }
                    if l == nil, right == nil { return nil }
                    if let (lk, lv) = l, let (rk, rv) = right, lk.elementsEqual(rk) {
                        if !lv.elementsEqual(rv) {
                            return Mismatch(
                                database: name, entry: describe(name, Array(lk)),
                                problem: "the stored value differs from the one the log implies (\(lv.count) bytes, expected \(rv.count))")
                        }
                        l = try left.next()
                        r = try folded.next()
                        continue
                    }
                    // The smaller key is the one the other side lacks.
                    if let (lk, _) = l, right == nil || RunRecord.compare(lk, right!.0) < 0 {
                        return Mismatch(database: name, entry: describe(name, Array(lk)), problem: "stored, but the log implies no such entry")
                    }
                    return Mismatch(database: name, entry: describe(name, Array(right!.0)), problem: "missing: the log implies this entry")
                }
            }
            if let mismatch { return mismatch }
        }
        return nil
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
