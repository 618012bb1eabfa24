import Basics

/// An event as stored: the draft plus what the ledger assigned when it committed.
public struct RecordedEvent: Hashable, Sendable {
    /// The global sequence number, dense from 1.
    public var sequence: UInt64
    /// When the ledger committed it; never earlier than the previous event's.
    public var recordedAt: Timestamp
    public var schemaVersion: Int
    public var actor: Actor
    public var body: EventBody
    public var identifiers: Identifiers
    public var occurredAt: Timestamp?
    public var idempotencyKey: String?

    public init(sequence: UInt64, recordedAt: Timestamp, actor: Actor, draft: EventDraft) {
        self.sequence = sequence
        self.recordedAt = recordedAt
        self.schemaVersion = draft.type.schemaVersion
        var actor = actor
        actor.runID = draft.runID
        self.actor = actor
        self.body = draft.body
        self.identifiers = draft.identifiers
        self.occurredAt = draft.occurredAt
        self.idempotencyKey = draft.idempotencyKey
    }

    /// The event's type.
    public var type: EventType { body.type }

    /// When it happened: the source's time if it gave one, otherwise when it was recorded.
    public var effectiveTime: Timestamp { occurredAt ?? recordedAt }

    /// The canonical JSON of this event: exactly the bytes the ledger stores and hashes.
    public var canonicalJSON: [UInt8] {
        let draft = EventDraft(body, identifiers: identifiers, occurredAt: occurredAt, idempotencyKey: idempotencyKey, runID: actor.runID)
        var bytes = draft.encodedPrefix(actor: actor)
        RecordedEvent.appendAssignedFields(to: &bytes, recordedAt: recordedAt, schemaVersion: schemaVersion, sequence: sequence, type: type)
        return bytes
    }

    /// Appends `,"recorded_at":…,"schema_version":…,"seq":…,"type":…}` to an encoded prefix.
    static func appendAssignedFields(to bytes: inout [UInt8], recordedAt: Timestamp, schemaVersion: Int, sequence: UInt64, type: EventType) {
        var w = JSONWriter(capacity: 0)
        swap(&w.bytes, &bytes)
        w.field("recorded_at", recordedAt)
        w.field("schema_version", schemaVersion)
        w.field("seq", sequence)
        w.field("type", type.rawValue)
        w.endObject()
        swap(&w.bytes, &bytes)
    }

    /// Decodes a stored event's JSON, reading each field in place (no tree of values).
    public init(json bytes: UnsafeRawBufferPointer) throws {
        let r = try FieldReader(document: bytes, context: "event")
        let envelope = try EventEnvelope(reading: r)
        self.sequence = envelope.sequence
        self.recordedAt = envelope.recordedAt
        self.schemaVersion = envelope.schemaVersion
        self.actor = try Actor(reading: r.object("actor"))
        self.body = try EventBody(type: envelope.type, reading: r.object("body"))
        self.identifiers = envelope.identifiers
        self.occurredAt = envelope.occurredAt
        self.idempotencyKey = envelope.idempotencyKey
    }
}
