import Basics
import LMDB

/// Writes the log's indexes (type, recorded time, idempotency key) for events in sequence
/// order: for each commit's events, and once for every event of a format-1 ledger being
/// upgraded. One place, so both write exactly the same entries.
package struct LogIndexWriter {
    package let schema: LedgerSchema
    /// The recorded time of the last event indexed (of the head before the first).
    private(set) var lastTime: Timestamp

    /// A writer of `schema`'s indexes after an event recorded at `lastTime`.
    package init(schema: LedgerSchema, lastTime: Timestamp) {
        self.schema = schema
        self.lastTime = lastTime
    }

    /// Indexes event `sequenceKey` of type `typeKey` holding idempotency hash `idempotencyHash`,
    /// recorded at `time`, in `transaction`. `time_index` keeps one entry per recorded time,
    /// naming the last event recorded then, so an event recorded at the same time as the one
    /// before replaces that entry.
    package mutating func index(
        _ sequenceKey: [UInt8], typeKey: [UInt8], idempotencyHash: [UInt8]?, recordedAt time: Timestamp, in transaction: WriteTransaction
    ) throws {
        try transaction.put(schema.byType, key: typeKey, value: sequenceKey, flags: .appendDuplicate)
        if let idempotencyHash { try transaction.put(schema.idempotency, key: idempotencyHash, value: sequenceKey) }
        try transaction.put(schema.byTime, key: LedgerSchema.timeKey(time), value: sequenceKey, flags: time > lastTime ? .append : [])
        lastTime = time
    }
}
