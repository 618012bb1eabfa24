import Basics
import LogEngine

/// What surrounds an event's body: its sequence, times, type, identifiers, run and
/// idempotency key, read from a stored record without decoding the body.
///
/// The log's indexes and the exports need only these; reading them skips the per-type body
/// decode, the costliest part of ``RecordedEvent/init(json:)``.
public struct EventEnvelope: Sendable {
    public var sequence: UInt64
    public var recordedAt: Timestamp
    public var occurredAt: Timestamp?
    public var type: EventType
    public var schemaVersion: Int
    public var identifiers: Identifiers
    public var runID: String?
    public var idempotencyKey: String?

    /// Reads a stored record (chain hash ‖ JSON), checking that its `seq` is `sequence`.
    public init(record raw: UnsafeRawBufferPointer, sequence: UInt64) throws {
        self = try LogView.read(
            raw, sequence: sequence, { try EventEnvelope(reading: FieldReader(document: $0, context: "event")) },
            sequenceOf: \.sequence)
    }

    /// Reads the envelope of an event's JSON (the bytes a ledger stores after the chain hash, an
    /// evidence file), without its body: what to check before the body is read.
    public init(json bytes: UnsafeRawBufferPointer) throws {
        try self.init(reading: FieldReader(document: bytes, context: "event"))
    }

    /// Reads the envelope's fields from an event's JSON object.
    init(reading r: FieldReader) throws {
        let typeName = try r.string("type")
        guard let type = EventType(rawValue: typeName) else { throw LedgerError(.malformedRecord, "\(r.context).type: unknown type \"\(typeName)\"") }
        let seq = try r.int("seq")
        guard seq > 0 else { throw LedgerError(.malformedRecord, "\(r.context).seq: expected a positive integer") }
        self.sequence = UInt64(seq)
        self.type = type
        self.recordedAt = try r.timestamp("recorded_at")
        self.occurredAt = try r.optionalTimestamp("occurred_at")
        self.schemaVersion = try r.int("schema_version")
        self.identifiers = try Identifiers(reading: r.object("identifiers"))
        self.runID = try r.object("actor").optionalString("run_id")
        self.idempotencyKey = try r.optionalString("idempotency_key")
    }
}
