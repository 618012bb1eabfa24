/// An event draft validated and encoded (all but the commit-time fields) on the caller's
/// task, so the writer's transaction does as little as possible.
struct PreparedEvent: Sendable {
    let draft: EventDraft
    let prefix: [UInt8]
    let identifierKeys: [[UInt8]]
    let typePrefix: [UInt8]

    init(_ draft: EventDraft, actor: Actor) throws {
        try draft.validate()
        self.draft = draft
        self.prefix = draft.encodedPrefix(actor: actor)
        self.identifierKeys = draft.identifiers.all.map(LedgerSchema.identifierPrefix)
        self.typePrefix = LedgerSchema.typePrefix(draft.type)
    }
}
