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
            guard let head = ChainHead(encoded: raw) else { throw LedgerError(.malformedRecord, "meta.head has \(raw.count) bytes, expected 48") }
            return head
        }
    }

    /// The stored bytes of event `sequence` (chain hash ‖ JSON), valid until the transaction ends.
    public func record(_ sequence: UInt64) throws -> UnsafeRawBufferPointer? {
        try LedgerSchema.logKey(sequence).withUnsafeBytes { try transaction.get(schema.log, key: $0) }
    }

    /// Event `sequence`, decoded; nil past the end of the log.
    public func event(_ sequence: UInt64) throws -> RecordedEvent? {
        guard let raw = try record(sequence) else { return nil }
        return try LogView.decode(raw, sequence: sequence)
    }

    /// Decodes a stored record, checking that its `seq` matches its key.
    public static func decode(_ raw: UnsafeRawBufferPointer, sequence: UInt64) throws -> RecordedEvent {
        guard raw.count > 32 else { throw LedgerError(.malformedRecord, "event \(sequence): record has \(raw.count) bytes") }
        let event: RecordedEvent
        do { event = try RecordedEvent(json: UnsafeRawBufferPointer(rebasing: raw[32...])) } catch let error as LedgerError {
            throw LedgerError(.malformedRecord, "event \(sequence): \(error.message)")
        }
        guard event.sequence == sequence else {
            throw LedgerError(.malformedRecord, "event \(sequence): its seq field says \(event.sequence)")
        }
        return event
    }

    /// Calls `body` with each event from `first` through `last` (inclusive), in order.
    public func forEachEvent(from first: UInt64, through last: UInt64, _ body: (RecordedEvent) throws -> Void) throws {
        guard first <= last else { return }
        try transaction.withCursor(schema.log) { cursor in
            var entry = try cursor.seek(atLeast: LedgerSchema.logKey(first))
            while let (key, value) = entry {
                let sequence = BigEndian.uint64(key)
                if sequence > last { break }
                try body(try LogView.decode(value, sequence: sequence))
                entry = try cursor.next()
            }
        }
    }

    /// Sequence numbers of the events that carry `identifier`, ascending.
    public func sequences(for identifier: Identifier) throws -> [UInt64] {
        try sequences(withPrefix: LedgerSchema.identifierPrefix(identifier), in: schema.byIdentifier)
    }

    /// Sequence numbers of the events of `type`, ascending.
    public func sequences(of type: EventType) throws -> [UInt64] {
        try sequences(withPrefix: LedgerSchema.typePrefix(type), in: schema.byType)
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

    /// Up to `count` sequence numbers of the events of `type` from `first` through `last`.
    private func sequences(of type: EventType, from first: UInt64, through last: UInt64, atMost count: Int) throws -> [UInt64] {
        try sequences(withPrefix: LedgerSchema.typePrefix(type), in: schema.byType, from: first, through: last, atMost: count)
    }

    /// The sequence numbers ending the index keys `prefix ‖ u64` of `database`, ascending,
    /// from `first` through `last`, at most `count` of them.
    private func sequences(withPrefix prefix: [UInt8], in database: Database, from first: UInt64 = 0, through last: UInt64 = .max, atMost count: Int = .max) throws -> [UInt64] {
        try transaction.withCursor(database) { cursor in
            var result: [UInt64] = []
            var entry = try cursor.seek(atLeast: prefix + BigEndian.bytes(first))
            while result.count < count, let (key, _) = entry, key.count == prefix.count + 8, key.starts(with: prefix) {
                let sequence = BigEndian.uint64(key, at: prefix.count)
                if sequence > last { break }
                result.append(sequence)
                entry = try cursor.next()
            }
            return result
        }
    }

    /// The last sequence number recorded at or before `time` (0 when none was).
    public func lastSequence(recordedAtOrBefore time: Timestamp) throws -> UInt64 {
        try transaction.withCursor(schema.byTime) { cursor in
            let entry = try cursor.seek(atMost: LedgerSchema.timeKey(time, .max))
            guard let (key, _) = entry else { return 0 }
            return BigEndian.uint64(key, at: 8)
        }
    }

    /// The sequence number recorded under idempotency key `key`, if any.
    public func sequence(forIdempotencyKey key: String) throws -> UInt64? {
        try transaction.get(schema.idempotency, key: Array(key.utf8)).map { BigEndian.uint64($0) }
    }

    /// The number of events in the log.
    public func eventCount() throws -> Int { try transaction.count(schema.log) }
}
