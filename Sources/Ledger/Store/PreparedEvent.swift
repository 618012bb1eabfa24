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
