import Basics
import LMDB
import LogEngine

/// The log read as events: decoded with their rows, found by type and by idempotency key.
extension LogView {
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

    /// Up to `count` sequence numbers of the events of `type` from `first` through `last`, ascending.
    func sequences(of type: EventType, from first: UInt64, through last: UInt64, atMost count: Int) throws -> [UInt64] {
        try sequences(ofTypeKey: LedgerSchema.typeKey(type.rawValue), from: first, through: last, atMost: count)
    }

    /// Calls `body` with the sequence numbers from `first` through `last` of the events of
    /// any of `types`, ascending: a merge of the types' index entries read 4,096 at a time.
    public func forEachSequence(ofAny types: Set<EventType>, from first: UInt64, through last: UInt64, _ body: (UInt64) throws -> Void) throws {
        try forEachSequence(ofAnyTypeKey: types.map { LedgerSchema.typeKey($0.rawValue) }, from: first, through: last, body)
    }

    /// The sequence number of the event holding idempotency key `key`, if any: each event filed
    /// under the key's hash is read until one's own `idempotency_key` is `key`.
    public func sequence(forIdempotencyKey key: String) throws -> UInt64? {
        try firstSequence(filedUnderIdempotencyHash: LedgerSchema.idempotencyHash(key)) {
            try event($0, holdsIdempotencyKey: key)
        }
    }

    /// Whether stored event `sequence` holds idempotency key `key` (its envelope read, not its body).
    func event(_ sequence: UInt64, holdsIdempotencyKey key: String) throws -> Bool {
        try envelope(of: sequence).idempotencyKey == key
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
}
