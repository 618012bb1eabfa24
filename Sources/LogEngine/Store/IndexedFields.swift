import Basics

/// The fields of a stored event the log's indexes are built from, as the vocabulary above
/// reads them for the engine (``LogRecordFormat``): what `verify` reads of every event.
package struct IndexedFields: Equatable, Sendable {
    /// The event's `seq`.
    package var sequence: UInt64
    /// Its `recorded_at`.
    package var recordedAt: Timestamp
    /// Its type: the position of the type in ``LogRecordFormat/types``.
    package var type: Int
    /// The `idempotency_index` key of its idempotency key (the first 8 bytes of its SHA-256,
    /// read big-endian), when it has one.
    package var idempotencyHash: UInt64?

    package init(sequence: UInt64, recordedAt: Timestamp, type: Int, idempotencyHash: UInt64?) {
        self.sequence = sequence
        self.recordedAt = recordedAt
        self.type = type
        self.idempotencyHash = idempotencyHash
    }
}
