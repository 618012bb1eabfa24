import Basics
import LMDB

/// Reads the log and its indexes inside one transaction (read or write), as bytes: records,
/// stored rows, and sequence numbers by type key, time and idempotency hash. What an event
/// means is read above the engine (`Ledger`'s extensions decode events, handoffs, cosignatures).
///
/// Like the transaction it wraps, a view is valid only inside the closure it is lent to.
public struct LogView {
    /// The transaction the view reads through.
    public let transaction: ReadTransaction
    /// The ledger's databases.
    public let schema: LedgerSchema

    public init(_ transaction: ReadTransaction, schema: LedgerSchema) {
        self.transaction = transaction
        self.schema = schema
    }

    /// The chain head: the last sequence number, its hash and recorded time.
    public func head() throws -> ChainHead {
        try LedgerSchema.headKey.withUnsafeBytes { key in
            guard let raw = try transaction.get(schema.meta, key: key) else { return .genesis }
            guard let head = ChainHead(encoded: raw) else {
                throw LedgerError(
                    .malformedRecord,
                    "meta.head is not 48 bytes of a sequence below 2^63, a hash and a time of years 0000 to 9999 (\(raw.count) bytes)")
            }
            return head
        }
    }

    /// The stored bytes of event `sequence` (chain hash ‖ JSON), valid until the transaction ends.
    public func record(_ sequence: UInt64) throws -> UnsafeRawBufferPointer? {
        try LedgerSchema.logKey(sequence).withUnsafeBytes { try transaction.get(schema.log, key: $0) }
    }

    /// The rows the `rows` database holds for event `sequence`: rows 0 to `count` - 1, each
    /// present, and no more.
    public func storedRows(of sequence: UInt64, count: Int) throws -> [[UInt8]] {
        guard let database = schema.rows else {
            throw LedgerError(.malformedRecord, "event \(sequence) keeps rows, and the ledger has no rows database")
        }
        var rows: [[UInt8]] = []
        rows.reserveCapacity(count)
        try transaction.withCursor(database) { cursor in
            var entry = try cursor.seek(atLeast: LedgerSchema.rowKey(sequence, 0))
            while let (key, value) = entry, key.elementsEqual(LedgerSchema.rowKey(sequence, rows.count)) {
                rows.append(Array(value))
                entry = try cursor.next()
            }
        }
        guard rows.count == count else {
            throw LedgerError(.malformedRecord, "event \(sequence): the rows database holds \(rows.count) consecutive rows of its \(count)")
        }
        return rows
    }

    /// The event JSON of a stored record (chain hash ‖ JSON): the bytes after the 32-byte chain
    /// hash; a ``LedgerError`` naming event `sequence` when the record is no longer than the hash.
    public static func eventJSON(ofStoredRecord raw: UnsafeRawBufferPointer, sequence: UInt64) throws -> UnsafeRawBufferPointer {
        guard raw.count > 32 else { throw LedgerError(.malformedRecord, "event \(sequence): record has \(raw.count) bytes") }
        return UnsafeRawBufferPointer(rebasing: raw[32...])
    }

    /// Calls `body` with the sequence numbers from `first` through `last` of the events filed
    /// under any of `typeKeys`, ascending: a merge of the keys' index entries read 4,096 at a time.
    package func forEachSequence(ofAnyTypeKey typeKeys: [[UInt8]], from first: UInt64, through last: UInt64, _ body: (UInt64) throws -> Void) throws {
        var chunks = try typeKeys.map { try sequences(ofTypeKey: $0, from: first, through: last, atMost: 4096) }
        var positions = [Int](repeating: 0, count: typeKeys.count)
        while true {
            var smallest: (list: Int, sequence: UInt64)?
            for i in chunks.indices where positions[i] < chunks[i].count {
                let s = chunks[i][positions[i]]
                if s < smallest?.sequence ?? .max { smallest = (i, s) }
            }
            guard let (i, sequence) = smallest else { return }
            try body(sequence)
            positions[i] += 1
            if positions[i] == chunks[i].count, sequence < last {
                chunks[i] = try sequences(ofTypeKey: typeKeys[i], from: sequence + 1, through: last, atMost: 4096)
                positions[i] = 0
            }
        }
    }

    /// Up to `count` sequence numbers of the events filed under `typeKey` (``LedgerSchema/typeKey(_:)``)
    /// from `first` through `last`, ascending: the key's values in `type_index`, read a page at a time.
    package func sequences(ofTypeKey typeKey: [UInt8], from first: UInt64, through last: UInt64, atMost count: Int) throws -> [UInt64] {
        try transaction.withCursor(schema.byType) { cursor in
            var result: [UInt64] = []
            guard let (_, found) = try cursor.seek(key: typeKey, valueAtLeast: BigEndian.bytes(first)) else {
                return result
            }
            // A page of values is the whole page the cursor is on, from before `first` too; a
            // key with a single value has no pages and answers with none.
            var page = try cursor.duplicatesPage()
            if page?.value.isEmpty ?? true { page = (found, found) }
            while let (_, values) = page {
                for offset in stride(from: 0, to: values.count, by: 8) {
                    let sequence = try BigEndian.uint64(values, at: offset)
                    if sequence < first { continue }
                    guard sequence <= last, result.count < count else { return result }
                    result.append(sequence)
                }
                page = try cursor.nextDuplicatesPage()
            }
            return result
        }
    }

    /// The last sequence number recorded at or before `time` (0 when none was).
    public func lastSequence(recordedAtOrBefore time: Timestamp) throws -> UInt64 {
        try transaction.withCursor(schema.byTime) { cursor in
            guard let (_, value) = try cursor.seek(atMost: LedgerSchema.timeKey(time)) else { return 0 }
            let sequence = try BigEndian.uint64(value)
            // Events are numbered below 2^63 (their JSON's `seq`): a larger entry is an altered copy's.
            guard sequence < UInt64(Int64.max) else {
                throw LedgerError(.malformedRecord, "time_index names event \(sequence), a number no event has")
            }
            return sequence
        }
    }

    /// The first event filed under idempotency hash `hash` (``LedgerSchema/idempotencyHash(_:)``)
    /// for which `holdsKey` says its record holds the key sought: two keys may share a hash, and
    /// the event's own key decides.
    package func firstSequence(filedUnderIdempotencyHash hash: [UInt8], where holdsKey: (UInt64) throws -> Bool) throws -> UInt64? {
        try transaction.withCursor(schema.idempotency) { cursor in
            var entry = try cursor.seek(exactly: hash)
            while let (_, value) = entry {
                let sequence = try BigEndian.uint64(value)
                if try holdsKey(sequence) { return sequence }
                entry = try cursor.nextDuplicate()
            }
            return nil
        }
    }

    /// The number of events in the log.
    public func eventCount() throws -> Int { try transaction.count(schema.log) }
}
