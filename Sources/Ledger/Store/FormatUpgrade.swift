import Basics
import LMDB
import LogEngine

/// Upgrades a format-1 ledger to format 2 in place, at its first writable open.
///
/// Format 2 keeps every event's bytes, the chain, the Merkle tree and the checkpoints as they
/// are; only the log's indexes change. The upgrade builds the new indexes from the log,
/// `Ledger.eventsPerBackgroundTransaction` events per transaction with its progress
/// (`meta["upgrade"]`) committed alongside, so a killed upgrade continues where it stopped.
/// Until the last transaction the ledger stays format 1 with its old indexes whole (a binary
/// from before may still append; its events are indexed too); that transaction drops the old
/// indexes and writes the new marker.
enum FormatUpgrade {
    /// Upgrades the ledger in `environment`, `chunk` events per transaction; `afterStep` hears
    /// the last sequence indexed after each transaction (tests stop it there, as a kill would).
    /// Returns the number of events the new indexes cover.
    @discardableResult
    static func run(
        on environment: Environment, chunk: UInt64 = Ledger.eventsPerBackgroundTransaction, afterStep: ((UInt64) throws -> Void)? = nil
    ) throws -> UInt64 {
        try environment.write { txn in
            let schema = try LedgerSchema.open(in: txn, create: true)
            guard try isFormat1(txn, meta: schema.meta), try txn.get(schema.meta, key: LedgerSchema.upgradeKey) == nil else { return }
            for database in try [schema.byType, schema.byTime, schema.idempotency] { try txn.clear(database) }
            try txn.put(schema.meta, key: LedgerSchema.upgradeKey, value: BigEndian.bytes(0))
        }
        while true {
            let (done, indexed) = try environment.write { try step($0, chunk: chunk) }
            if done { return indexed }
            try afterStep?(indexed)
        }
    }

    /// Indexes the next chunk of events, or finishes; true once the ledger is format 2, with
    /// the last sequence indexed.
    private static func step(_ txn: WriteTransaction, chunk: UInt64) throws -> (done: Bool, indexed: UInt64) {
        let schema = try LedgerSchema.open(in: txn, create: false)
        guard try isFormat1(txn, meta: schema.meta) else { return (true, 0) }
        let view = LogView(txn, schema: schema)
        let head = try view.head().sequence
        guard let progress = try txn.get(schema.meta, key: LedgerSchema.upgradeKey), progress.count == 8 else {
            throw LedgerError(.malformedRecord, "meta.upgrade is missing or not 8 bytes during the format upgrade")
        }
        let indexed = try BigEndian.uint64(progress)
        if indexed >= head {
            for name in LedgerSchema.format1IndexNames {
                do { try txn.drop(try txn.openDatabase(name, create: false)) } catch let error as LMDBError where error.code == .notFound {}
            }
            try txn.put(schema.meta, key: LedgerSchema.formatKey, value: Array(LedgerSchema.formatMarker.utf8))
            try txn.delete(schema.meta, key: LedgerSchema.upgradeKey)
            return (true, head)
        }
        let last = head - indexed > chunk ? indexed + chunk : head
        let lastTime = try indexed == 0 ? Timestamp(microseconds: 0) : view.envelope(of: indexed).recordedAt
        var writer = LogIndexWriter(schema: schema, lastTime: lastTime)
        try txn.withCursor(schema.log) { cursor in
            var entry = try cursor.seek(atLeast: LedgerSchema.logKey(indexed + 1))
            while let (key, value) = entry, try BigEndian.uint64(key) <= last {
                let fields = try EventEnvelope(record: value, sequence: BigEndian.uint64(key))
                try writer.index(
                    Array(key), typeKey: LedgerSchema.typeKey(fields.type.rawValue),
                    idempotencyHash: fields.idempotencyKey.map(LedgerSchema.idempotencyHash), recordedAt: fields.recordedAt, in: txn)
                entry = try cursor.next()
            }
        }
        try txn.put(schema.meta, key: LedgerSchema.upgradeKey, value: BigEndian.bytes(last))
        return (false, last)
    }

    /// Whether the ledger in `environment` is format 1 (or on its way from it).
    static func isFormat1(_ environment: Environment) throws -> Bool {
        try environment.read { txn in try isFormat1(txn, meta: try txn.openDatabase("meta", create: false)) }
    }

    /// Whether `meta`, read in `txn`, holds format 1's marker.
    private static func isFormat1(_ txn: ReadTransaction, meta: Database) throws -> Bool {
        try txn.get(meta, key: LedgerSchema.formatKey) == Array(LedgerSchema.format1Marker.utf8)
    }

    /// Brings a format-2 ledger to format 3: adds the empty `rows` database and writes the new
    /// marker, in one transaction. Events stay as they are. True when it did.
    static func addRows(on environment: Environment) throws -> Bool {
        try environment.write { txn in
            let meta = try txn.openDatabase("meta", create: false)
            guard try txn.get(meta, key: LedgerSchema.formatKey) == Array(LedgerSchema.format2Marker.utf8) else { return false }
            _ = try LedgerSchema.open(in: txn, create: true)
            try txn.put(meta, key: LedgerSchema.formatKey, value: Array(LedgerSchema.formatMarker.utf8))
            return true
        }
    }
}
