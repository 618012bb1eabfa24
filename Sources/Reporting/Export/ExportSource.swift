import Basics
import Ledger
import LogEngine
import Projections

/// Reads what an export writes, in one read transaction so users and events agree: the
/// events after a sequence number, then the rows those and any events not yet exported whole
/// keep beside them, then the users those events changed, then (with personal data) the earlier
/// events of users erased since, rendered again without their addresses.
struct ExportSource: Sendable {
    let ledger: Ledger
    let projection: UserProjection
    let includePersonalData: Bool

    /// Which users a read hands over.
    enum Users: Equatable {
        /// Every user.
        case all
        /// The users whose state changed after this sequence number: those the events after it
        /// name (those handed over and any before them), or every user once the transfer window
        /// changed (it moves `before_deadline`). After 0, every user.
        case changedAfter(UInt64)
    }

    /// What a read hands its rows to, in this order: every event, every kept row, every user,
    /// every rewrite.
    struct Handlers {
        var event: (ExportedEvent) throws -> Void
        /// A row an event keeps beside it, in order of event and index.
        var row: (ExportedRow) throws -> Void
        var user: (UserRow) throws -> Void
        /// Exported before, about a user erased since, and rendered again with null where the
        /// address was: an event at or before `after`, or the user's row of an apply batch kept
        /// beside one; only with personal data, and only for a caller that takes them.
        var rewrite: ((Rewrite) throws -> Void)? = nil
    }

    /// What is exported again once its user is erased (``Handlers/rewrite``).
    enum Rewrite {
        /// The event of `sequence`, its JSON rendered now.
        case event(sequence: UInt64, eventJSON: [UInt8])
        /// A kept row, its line rendered now.
        case row(ExportedRow)
    }

    /// Where a read ended: the last event in the picture it read, and the transfer window then.
    struct End {
        var last: UInt64
        var window: TransferWindow?
    }

    /// Hands over the events after `after`, the rows kept beside the events after `rowsAfter`
    /// (at most `after`: an export that holds events but not yet their rows, one made before
    /// rows were exported, or one whose run committed events and stopped before its rows), and
    /// the `users` asked for, then, with personal data and a `rewrite` handler, the events up to
    /// `after` of the users erased since: of the changed users, or of every erased user when
    /// every user is handed over after `after` > 0 (a first export continued after it stopped).
    func read(after: UInt64, rowsAfter: UInt64, users: Users, to handlers: Handlers) throws -> End {
        let sealer = includePersonalData ? ledger.sealer : nil
        let changedAfter: UInt64? =
            switch users {
            case .all: nil
            case .changedAfter(let sequence): sequence > 0 ? sequence : nil
            }
        return try projection.read(ledger) { snapshot, view in
            let last = try snapshot.checkpoint()
            var named = Set<Identifier>()
            var windowChanged = false
            // One pass over the log: the users and the window changed after `changedAfter`
            // (which is behind `after` when a run committed slices of events and stopped before
            // its users), and the events after `after`, handed over.
            let first = min(changedAfter ?? after, after) + 1
            if last >= first {
                try view.transaction.withCursor(view.schema.log) { cursor in
                    var entry = try cursor.seek(atLeast: LedgerSchema.logKey(first))
                    while let (key, value) = entry {
                        let sequence = try BigEndian.uint64(key)
                        if sequence > last { break }
                        let recorded = try EventEnvelope(record: value, sequence: sequence)
                        if changedAfter != nil {
                            for identifier in recorded.identifiers.all where identifier.kind != .jti { named.insert(identifier) }
                            if recorded.type == .transferAccepted { windowChanged = true }
                        }
                        if sequence > after {
                            try handlers.event(
                                ExportedEvent(
                                    sequence: sequence, recordedAt: recorded.recordedAt, occurredAt: recorded.occurredAt,
                                    type: recorded.type.rawValue,
                                    schemaVersion: recorded.schemaVersion, identifiers: recorded.identifiers, runID: recorded.runID,
                                    eventJSON: try SealedJSON.opened(UnsafeRawBufferPointer(rebasing: value[32...]), with: sealer),
                                    chainHash: Hex.encode(UnsafeRawBufferPointer(rebasing: value[0..<32]))))
                        }
                        entry = try cursor.next()
                    }
                }
            }
            try readRows(after: min(rowsAfter, after), through: last, in: view, sealer: sealer, to: handlers.row)
            // The users, read from the projections; only an address in clear is exported.
            let window = try snapshot.window()
            let now = Timestamp.now()
            func emit(_ user: UserState) throws {
                try handlers.user(UserRow(user, window: window, time: now, email: try EmailValue(of: user, sealer: sealer).clearOnly))
            }
            var changed: [UInt64: UserState] = [:]
            for identifier in named {
                if let user = try snapshot.user(with: identifier) { changed[user.key] = user }
            }
            if changedAfter == nil || windowChanged {
                try snapshot.forEachUser(emit)
            } else {
                for key in changed.keys.sorted() { try emit(changed[key]!) }
            }
            if let sealer, let rewrite = handlers.rewrite, after > 0 {
                var erased: [UserState] = []
                if changedAfter == nil {
                    try snapshot.forEachUser { if $0.erasedAt != nil { erased.append($0) } }
                } else {
                    erased = changed.values.filter { $0.erasedAt != nil }
                }
                try rewriteErased(erased, through: after, view: view, snapshot: snapshot, sealer: sealer, to: rewrite)
            }
            return End(last: last, window: try snapshot.window())
        }
    }

    /// Hands over the rows of the events after `after` up to `through`, as the `rows` database
    /// keeps them (sorted by event and index): an apply batch's addresses sealed, or with a
    /// `sealer` (personal data) opened; none in a ledger of a format without it.
    private func readRows(after: UInt64, through: UInt64, in view: LogView, sealer: Sealer?, to row: (ExportedRow) throws -> Void) throws {
        guard let rows = view.schema.rows, through > after else { return }
        var batch: (sequence: UInt64, sealed: Bool)?
        try view.transaction.withCursor(rows) { cursor in
            var entry = try cursor.seek(atLeast: LedgerSchema.rowKey(after + 1, 0))
            while let (key, value) = entry {
                let (sequence, index) = try LedgerSchema.rowKeyParts(key)
                if sequence > through { break }
                if let sealer {
                    // Only an apply batch's lines hold sealed values (a package's are CSV lines).
                    if batch?.sequence != sequence { batch = (sequence, try Self.holdsSealedValues(sequence, view)) }
                    let line = try batch!.sealed ? SealedJSON.opened(value, with: sealer) : Array(value)
                    try row(ExportedRow(sequence: sequence, index: index, line: line))
                } else {
                    try row(ExportedRow(sequence: sequence, index: index, line: Array(value)))
                }
                entry = try cursor.next()
            }
        }
    }

    /// Whether the rows event `sequence` keeps may hold sealed values: an "apply intended"'s.
    private static func holdsSealedValues(_ sequence: UInt64, _ view: LogView) throws -> Bool {
        guard let record = try view.record(sequence) else { return false }
        return try EventEnvelope(record: record, sequence: sequence).type == .applyIntended
    }

    /// Hands over again, rendered now, the events up to `through` of each of `users` (erased,
    /// so their sealed values now render as null), and their rows of apply batches that hold an
    /// address.
    private func rewriteErased(
        _ users: [UserState], through: UInt64, view: LogView, snapshot: any ProjectionSnapshot, sealer: Sealer,
        to rewrite: (Rewrite) throws -> Void
    ) throws {
        guard !users.isEmpty else { return }
        // Each event once: several users' records can hold one event (a chunk of handoff rows).
        var rewritten = Set<UInt64>()
        try view.transaction.withCursor(view.schema.log) { cursor in
            for user in users {
                for sequence in try snapshot.eventSequences(linkedTo: user.identifiers)
                where sequence <= through && rewritten.insert(sequence).inserted {
                    guard let (_, value) = try cursor.seek(exactly: LedgerSchema.logKey(sequence)) else { continue }
                    let json = try SealedJSON.opened(try LogView.eventJSON(ofStoredRecord: value, sequence: sequence), with: sealer)
                    try rewrite(.event(sequence: sequence, eventJSON: json))
                }
            }
        }
        for user in users {
            for applied in try EventQuery.applyRows(of: user, through: through, snapshot: snapshot, view: view) {
                guard let intent = applied.intentSequence, applied.cell(.email) != nil, let kept = try view.eventAsLogged(intent)?.body.keptRowCount,
                    applied.index < kept
                else { continue }
                let line = try view.storedRows(of: intent, count: kept)[applied.index]
                try rewrite(.row(ExportedRow(sequence: intent, index: applied.index, line: try SealedJSON.opened(line, with: sealer))))
            }
        }
    }
}

extension ExportSource {
    /// The fields every export's manifest starts with (a directory's `manifest.json`, a stream's
    /// last line): the format, the ledger, the schema, personal data or not, how far it reaches.
    func manifestFields(_ format: ExportFormat, identity: LedgerCreated, lastSequence: UInt64) -> [String: JSONValue] {
        [
            "format": .string(format.rawValue), "ledger_id": .string(identity.ledgerID), "team_id": .string(identity.teamID),
            "role": .string(identity.role.rawValue), "schema_version": .int(Int64(ExportSchema.version)),
            "personal_data": .bool(includePersonalData), "last_sequence": .int(Int64(lastSequence)), "exported_at": .string(Timestamp.now().rfc3339),
        ]
    }
}
