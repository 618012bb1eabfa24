import Basics
import LogEngine

/// An event draft validated and encoded (all but the commit-time fields) on the caller's
/// task, so the writer's transaction does as little as possible.
struct PreparedEvent: Sendable {
    let draft: EventDraft
    let prefix: [UInt8]
    let typeKey: [UInt8]
    /// `idempotency_index` key of the draft's idempotency key, if it has one.
    let idempotencyHash: [UInt8]?
    /// The rows stored beside the event (``EventBody/storedRows``).
    let rows: [[UInt8]]

    init(_ draft: EventDraft, actor: Actor) throws {
        try draft.validate()
        self.draft = draft
        self.prefix = draft.encodedPrefix(actor: actor)
        self.typeKey = LedgerSchema.typeKey(draft.type.rawValue)
        self.idempotencyHash = draft.idempotencyKey.map(LedgerSchema.idempotencyHash)
        self.rows = draft.body.storedRows
    }
}

/// What the log engine needs of a prepared event: the bytes, the index values, the fields the
/// log assigns written in the event's JSON, and how a stored event's own key is read.
extension PreparedEvent: LogEntry {
    var idempotencyKey: String? { draft.idempotencyKey }

    func appendAssignedFields(to record: inout [UInt8], sequence: UInt64, recordedAt: Timestamp) {
        RecordedEvent.appendAssignedFields(
            to: &record, recordedAt: recordedAt, schemaVersion: draft.type.schemaVersion, sequence: sequence, type: draft.type)
    }

    static func event(_ sequence: UInt64, in view: LogView, holdsIdempotencyKey key: String) throws -> Bool {
        try view.event(sequence, holdsIdempotencyKey: key)
    }
}
