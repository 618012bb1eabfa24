import Basics

/// One event as the log engine appends it: its bytes and the values its indexes are built
/// from, handed over by the event vocabulary above, since the engine reads no event's fields.
package protocol LogEntry {
    /// The event's JSON up to the fields the log assigns when it commits the event.
    var prefix: [UInt8] { get }
    /// Its type's `type_index` key (``LedgerSchema/typeKey(_:)``).
    var typeKey: [UInt8] { get }
    /// Its idempotency key, if it has one: no two events of the log hold the same.
    var idempotencyKey: String? { get }
    /// The `idempotency_index` key of ``idempotencyKey`` (``LedgerSchema/idempotencyHash(_:)``).
    var idempotencyHash: [UInt8]? { get }
    /// The rows stored beside the event in the `rows` database, in order.
    var rows: [[UInt8]] { get }

    /// Appends the fields the log assigns (the event's sequence number and recorded time) to
    /// `record`, which holds ``prefix``, closing the event's JSON.
    func appendAssignedFields(to record: inout [UInt8], sequence: UInt64, recordedAt: Timestamp)

    /// Whether stored event `sequence` holds idempotency key `key`: keys that share an index
    /// hash are told apart by the event's own.
    static func event(_ sequence: UInt64, in view: LogView, holdsIdempotencyKey key: String) throws -> Bool
}
