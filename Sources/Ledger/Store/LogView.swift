import Basics
import LMDB

/// Reads the log and its indexes inside one transaction (read or write).
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

    /// Event `sequence`, decoded, with the rows stored beside it; nil past the end of the log.
    public func event(_ sequence: UInt64) throws -> RecordedEvent? {
        guard let raw = try record(sequence) else { return nil }
        return try withStoredRows(LogView.decode(raw, sequence: sequence))
    }

    /// Event `sequence` decoded from the JSON the log hashed alone: a body that keeps its rows in
    /// the `rows` database (``EventBody/keptRowCount``) comes without them, unread and unchecked.
    /// For its root and counts; nil past the end of the log.
    public func eventAsLogged(_ sequence: UInt64) throws -> RecordedEvent? {
        guard let raw = try record(sequence) else { return nil }
        return try LogView.decode(raw, sequence: sequence)
    }

    /// `event` given the rows the `rows` database holds for it, where its body keeps them there
    /// (a v2 batch body read from its JSON alone: ``EventBody/keptRowCount``); every other event
    /// as it is.
    public func withStoredRows(_ event: RecordedEvent) throws -> RecordedEvent {
        guard event.body.lacksRows else { return event }
        var attached = event
        do { try attached.body.attach(rowLines: try storedRows(of: event.sequence, count: event.body.keptRowCount)) } catch let error as LedgerError {
            throw LedgerError(.malformedRecord, "event \(event.sequence): \(error.message)", underlying: error.underlying)
        }
        return attached
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

    /// Decodes a stored record, checking that its `seq` matches its key.
    public static func decode(_ raw: UnsafeRawBufferPointer, sequence: UInt64) throws -> RecordedEvent {
        try read(raw, sequence: sequence, RecordedEvent.init(json:), sequenceOf: \.sequence)
    }

    /// Reads a stored record (chain hash ‖ JSON) with `read`, naming event `sequence` in any
    /// error and checking that the JSON's own `seq` is `sequence`.
    static func read<T>(
        _ raw: UnsafeRawBufferPointer, sequence: UInt64, _ read: (UnsafeRawBufferPointer) throws -> T,
        sequenceOf: (T) -> UInt64
    ) throws -> T {
        let json = try eventJSON(ofStoredRecord: raw, sequence: sequence)
        let value: T
        do { value = try read(json) } catch let error as LedgerError {
            throw LedgerError(.malformedRecord, "event \(sequence): \(error.message)", underlying: error.underlying)
        }
        guard sequenceOf(value) == sequence else {
            throw LedgerError(.malformedRecord, "event \(sequence): its seq field says \(sequenceOf(value))")
        }
        return value
    }

    /// The events `range` names, decoded, in order (those the log holds).
    /// Every event of `range`; a ``LedgerError`` (malformed record) when the log lacks one (a
    /// head, a checkpoint or a count in an altered copy that names events the log does not
    /// hold), so no caller folds a range forever without reaching its end.
    public func events(_ range: ClosedRange<UInt64>) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        events.reserveCapacity(Int(min(range.upperBound - range.lowerBound, 4096)) + 1)
        try forEachEvent(from: range.lowerBound, through: range.upperBound) { events.append($0) }
        guard !events.isEmpty, UInt64(events.count - 1) == range.upperBound - range.lowerBound else {
            throw LedgerError(
                .malformedRecord,
                "the log holds \(events.count) of events \(range.lowerBound) to \(range.upperBound), which the ledger's records say it has")
        }
        return events
    }

    /// Calls `body` with each event from `first` through `last` (inclusive), in order.
    public func forEachEvent(from first: UInt64, through last: UInt64, _ body: (RecordedEvent) throws -> Void) throws {
        guard first <= last else { return }
        try transaction.withCursor(schema.log) { cursor in
            var entry = try cursor.seek(atLeast: LedgerSchema.logKey(first))
            while let (key, value) = entry {
                let sequence = try BigEndian.uint64(key)
                if sequence > last { break }
                try body(try withStoredRows(LogView.decode(value, sequence: sequence)))
                entry = try cursor.next()
            }
        }
    }

    /// Sequence numbers of the events of `type`, ascending.
    public func sequences(of type: EventType) throws -> [UInt64] {
        try sequences(of: type, from: 1, through: .max, atMost: .max)
    }

    /// Calls `body` with the sequence numbers from `first` through `last` of the events of
    /// any of `types`, ascending: a merge of the types' index entries read 4,096 at a time.
    public func forEachSequence(ofAny types: Set<EventType>, from first: UInt64, through last: UInt64, _ body: (UInt64) throws -> Void) throws {
        let order = Array(types)
        var chunks = try order.map { try sequences(of: $0, from: first, through: last, atMost: 4096) }
        var positions = [Int](repeating: 0, count: order.count)
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
                chunks[i] = try sequences(of: order[i], from: sequence + 1, through: last, atMost: 4096)
                positions[i] = 0
            }
        }
    }

    /// Up to `count` sequence numbers of the events of `type` from `first` through `last`,
    /// ascending: the values of the type's `type_index` key, read a page at a time.
    func sequences(of type: EventType, from first: UInt64, through last: UInt64, atMost count: Int) throws -> [UInt64] {
        try transaction.withCursor(schema.byType) { cursor in
            var result: [UInt64] = []
            guard let (_, found) = try cursor.seek(key: LedgerSchema.typeKey(type), valueAtLeast: BigEndian.bytes(first)) else { return result }
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

    /// The sequence number of the event holding idempotency key `key`, if any.
    public func sequence(forIdempotencyKey key: String) throws -> UInt64? {
        try sequence(forIdempotencyKey: key, hash: LedgerSchema.idempotencyHash(key))
    }

    /// The event holding `key`, found under its hash `hash`: each event filed under the hash
    /// is read until one's own `idempotency_key` is `key`.
    func sequence(forIdempotencyKey key: String, hash: [UInt8]) throws -> UInt64? {
        try transaction.withCursor(schema.idempotency) { cursor in
            var entry = try cursor.seek(exactly: hash)
            while let (_, value) = entry {
                let sequence = try BigEndian.uint64(value)
                if try envelope(of: sequence).idempotencyKey == key { return sequence }
                entry = try cursor.nextDuplicate()
            }
            return nil
        }
    }

    /// The sequence number of the notification with `jti` (found through its idempotency key,
    /// ``EventDraft/notificationIdempotencyKey(jti:)``), if the ledger has it.
    public func sequence(ofNotification jti: String) throws -> UInt64? {
        guard let sequence = try sequence(forIdempotencyKey: EventDraft.notificationIdempotencyKey(jti: jti)),
            try event(sequence)?.identifiers.jti == jti
        else { return nil }
        return sequence
    }

    /// Event `sequence`'s envelope (the fields the log's indexes are built from), read
    /// without its body.
    func envelope(of sequence: UInt64) throws -> EventEnvelope {
        guard let raw = try record(sequence) else { throw LedgerError(.malformedRecord, "event \(sequence) is missing from the log") }
        return try EventEnvelope(record: raw, sequence: sequence)
    }

    /// The number of events in the log.
    public func eventCount() throws -> Int { try transaction.count(schema.log) }
}
