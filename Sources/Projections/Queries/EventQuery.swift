import Basics
import Ledger
import LogEngine

/// Lists events from the log, by identifier, type and recorded time, newest last.
public struct EventQuery: Sendable {
    /// Only events carrying this identifier value (of any user kind, or a `jti`).
    public var identifier: String?
    /// Only events of these types.
    public var types: Set<EventType> = []
    /// Only events recorded at or after this time.
    public var since: Timestamp?
    /// Only events recorded at or before this time (`--as-of`).
    public var until: Timestamp?
    /// At most this many (the last ones).
    public var limit: Int?

    public init(identifier: String? = nil, types: Set<EventType> = [], since: Timestamp? = nil, until: Timestamp? = nil, limit: Int? = nil) {
        self.identifier = identifier
        self.types = types
        self.since = since
        self.until = until
        self.limit = limit
    }

    /// Calls `body` with each matching event in order, inside one read transaction, reading
    /// through the identifier or type index where a filter allows. Memory stays that of one
    /// event, or of `limit` events when the last ones are asked for.
    public func forEach(in ledger: Ledger, projection: UserProjection, _ body: (RecordedEvent) throws -> Void) throws {
        try projection.read(ledger) { snapshot, view in
            let last = try until.map { try view.lastSequence(recordedAtOrBefore: $0) } ?? view.head().sequence
            let first = try since.map { try view.lastSequence(recordedAtOrBefore: Timestamp(microseconds: $0.microseconds - 1)) + 1 } ?? 1
            guard first <= last else { return }
            var kept: [RecordedEvent] = []
            var oldest = 0
            func match(_ event: RecordedEvent) throws {
                guard types.isEmpty || types.contains(event.type) else { return }
                guard let limit else { return try body(event) }
                if kept.count < limit {
                    kept.append(event)
                } else {
                    kept[oldest] = event
                    oldest = (oldest + 1) % limit
                }
            }
            if let identifier {
                // The events naming the user, as an evidence bundle holds them (`query user` adds
                // the batch events' lines about them), or the notification with that jti.
                var events =
                    try snapshot.user(matching: identifier).map { try EventQuery.history(of: $0, through: last, snapshot: snapshot, view: view) }
                    ?? []
                if let notification = try view.sequence(ofNotification: identifier), !events.contains(where: { $0.sequence == notification }),
                    let event = try view.event(notification)
                {
                    events.append(event)
                    events.sort { $0.sequence < $1.sequence }
                }
                for event in events where event.sequence >= first { try match(event) }
            } else if !types.isEmpty {
                try view.forEachSequence(ofAny: types, from: first, through: last) { sequence in
                    if let event = try view.event(sequence) { try match(event) }
                }
            } else {
                let start = limit.map { last >= UInt64($0) ? max(first, last - UInt64($0) + 1) : first } ?? first
                try view.forEachEvent(from: start, through: last, match)
            }
            for event in kept[oldest...] + kept[..<oldest] { try body(event) }
        }
    }

    /// Whether `identifier` is in the ledger (as it stood at `until`): a user's identifier of any
    /// kind, or a notification's `jti`. An identifier that is not is no answer of
    /// ``forEach(in:projection:_:)`` but a question about nothing the ledger holds.
    public static func isKnown(_ identifier: String, until: Timestamp? = nil, in ledger: Ledger, projection: UserProjection) throws -> Bool {
        try projection.read(ledger, asOf: until) { snapshot, view in
            if try snapshot.user(matching: identifier) != nil { return true }
            guard let notification = try view.sequence(ofNotification: identifier) else { return false }
            return try notification <= (until.map { try view.lastSequence(recordedAtOrBefore: $0) } ?? view.head().sequence)
        }
    }

    /// The matching events collected in memory: for small answers and tests.
    public func run(on ledger: Ledger, projection: UserProjection) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        try forEach(in: ledger, projection: projection) { events.append($0) }
        return events
    }

    /// Writes the matching events into `sink` as the rows of ``Answers/events``.
    public func write(in ledger: Ledger, projection: UserProjection, into sink: any RowSink) throws {
        let rows = try Answers.events.stream(into: sink)
        try forEach(in: ledger, projection: projection) { try rows.append(EventRow($0)) }
        try rows.finish()
    }

    /// Every event that names one of `user`'s identifiers, recorded up to `until`, in order:
    /// found through the user's own records (and those of users merged into it), not by
    /// reading the log.
    public static func history(of user: UserState, until: Timestamp? = nil, in ledger: Ledger, projection: UserProjection) throws -> [RecordedEvent] {
        try projection.read(ledger) { snapshot, view in
            let last = try until.map { try view.lastSequence(recordedAtOrBefore: $0) } ?? view.head().sequence
            return try history(of: user, through: last, snapshot: snapshot, view: view)
        }
    }

    /// ``history(of:until:in:projection:)`` inside a read already open, through sequence
    /// `last`: the one lookup of a user's events (`query user`, `query events --id`, `evidence`).
    public static func history(of user: UserState, through last: UInt64, snapshot: any ProjectionSnapshot, view: LogView) throws -> [RecordedEvent] {
        let identifiers = user.identifiers
        // Read as logged first: a batch event's rows are read only when it names the user (none does).
        return try snapshot.eventSequences(linkedTo: identifiers).filter { $0 <= last }.compactMap { sequence in
            guard let event = try view.eventAsLogged(sequence), identifiers.contains(where: { event.identifiers[$0.kind] == $0.value }) else {
                return nil
            }
            return try view.withStoredRows(event)
        }
    }

    /// ``history(of:through:snapshot:view:)`` and the batch events whose body names the user (a
    /// received package's row, an apply batch's intent and settlement), each with its line about
    /// the user: what `query user` lists. `query events --id` and evidence bundles hold the
    /// history alone, since a batch event names other people too.
    /// An apply row's email addresses are opened with `sealer` (shown sealed without one).
    public static func historyWithBatches(
        of user: UserState, through last: UInt64, snapshot: any ProjectionSnapshot, view: LogView, sealer: Sealer? = nil
    ) throws -> [EventRow] {
        let identifiers = user.identifiers
        var rows: [EventRow] = []
        for sequence in try snapshot.eventSequences(linkedTo: identifiers) where sequence <= last {
            guard let event = try view.event(sequence) else { continue }
            if identifiers.contains(where: { event.identifiers[$0.kind] == $0.value }) {
                rows.append(EventRow(event))
            } else if case .applySettled = event.body, let applied = try UserApplyRow(event, about: user, view: view) {
                // The batch's intent, which names the account in its rows, before its settlement.
                if let intended = applied.intentSequence, let intent = try view.event(intended) {
                    rows.append(EventRow(intent, line: applied.intentLine))
                }
                rows.append(EventRow(event, line: applied.line(opening: sealer)))
            } else if let line = try batchLine(event, about: user, view: view, sealer: sealer) {
                rows.append(EventRow(event, line: line))
            }
        }
        // An intent comes before its settlement, not always right before it.
        return rows.sorted { $0.event.sequence < $1.event.sequence }
    }

    /// The user's rows of the apply batches that acted on their account, in order.
    public static func applyRows(of user: UserState, through last: UInt64, snapshot: any ProjectionSnapshot, view: LogView) throws -> [UserApplyRow] {
        try snapshot.eventSequences(linkedTo: user.identifiers).filter { $0 <= last }.compactMap { sequence in
            try view.eventAsLogged(sequence).flatMap { try UserApplyRow($0, about: user, view: view) }
        }
    }

    /// What a batch event says about `user`, nil when it does not name them.
    static func batchLine(_ event: RecordedEvent, about user: UserState, view: LogView, sealer: Sealer?) throws -> String? {
        switch event.body {
        case .handoffRowsReceived(let b):
            guard let sub = user.transferSub, let i = b.transferSubs.firstIndex(of: sub) else { return nil }
            let list = b.package.map { "handoff package \($0)" } ?? "an unsigned handoff list"
            return "\(list) listed this user: row \(b.firstRow + i + 1) of \(b.rowCount), "
                + (b.accountIDs[i].isEmpty ? "no account_id" : "account_id \(b.accountIDs[i])")
        case .applySettled:
            return try UserApplyRow(event, about: user, view: view)?.line(opening: sealer)
        default:
            return nil
        }
    }

    /// A one-line description of what an event says.
    public static func summary(_ e: RecordedEvent) -> String {
        switch e.body {
        case .ledgerCreated(let b): return "\(b.role.rawValue) ledger for team \(b.teamID), clients \(b.clientIDs.joined(separator: ","))"
        case .transferAccepted(let b): return "transfer accepted \(b.acceptedAt.date), deadline \(b.deadline.rfc3339)"
        case .runStarted(let b):
            return "\(b.command) started" + (b.userCount.map { ", " + counted($0, "user") } ?? "") + (b.targetTeam.map { ", target \($0)" } ?? "")
        case .runFinished(let b):
            return "\(b.command) finished, exit \(b.exitStatus), "
                + b.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        case .accessTokenIssued(let b): return "token \(b.fingerprint) for \(b.clientID), expires \(b.expiresAt.rfc3339)"
        case .accessTokenFailed(let b): return "token refused: \(b.failure.kind.rawValue): \(b.failure.message)"
        case .transferIDGenerated(let b): return "generated for target \(b.targetTeam)"
        case .transferIDGenerationFailed(let b):
            return "target \(b.targetTeam): \(b.failure.kind.rawValue) after \(EventQuery.tries(b.failure.attempts)): \(b.failure.message)"
        case .transferIDExchanged(let b): return "exchanged" + (b.isPrivateEmail == true ? ", private relay email" : "")
        case .transferIDExchangeFailed(let b): return "\(b.failure.kind.rawValue) after \(EventQuery.tries(b.failure.attempts)): \(b.failure.message)"
        case .signInVerified(let b): return "sign-in for \(b.audience)" + (e.identifiers.transferSub != nil ? " with transfer_sub" : "")
        case .signInRejected(let b), .notificationRejected(let b): return "rejected: \(b.reason): \(b.detail)"
        case .notificationReceived(let b): return b.kind.rawValue + " at \(b.eventTime.rfc3339)"
        case .userErased(let b): return "erased (\(b.reason)), \(counted(b.keysDestroyed, "key")) destroyed"
        case .rejectionsSummarized(let b):
            return "\(b.total) refused deliveries from \(b.source) over budget, \(b.from.rfc3339) to \(b.until.rfc3339), answered 429"
        case .handoffIssued(let b):
            return
                "handoff package \(b.package) for team \(b.targetTeam): \(counted(b.rowCount, "row")), checkpoint of \(counted(b.checkpoint.treeSize, "event"))"
        case .handoffReceived(let b):
            return
                "handoff package \(b.package) from team \(b.senderTeam) verified: \(counted(b.rowCount, "row")), sender checkpoint of \(counted(b.checkpoint.treeSize, "event"))"
        case .handoffRefused(let b): return "handoff package refused (\(b.reason)): \(b.detail)"
        case .handoffAcknowledged(let b):
            return
                "handoff package \(b.package) acknowledged by team \(b.targetTeam): receipt cosigned \(b.cosignedAt.rfc3339), their event \(b.recipientSequence)"
        case .witnessCosigned(let b):
            return "checkpoint of \(counted(b.checkpoint.treeSize, "event")) cosigned by witness \(b.witnessName) at \(b.cosignedAt.rfc3339)"
        case .checkpointWitnessed(let b):
            return "as a witness, cosigned \(b.origin)'s checkpoint of \(counted(b.treeSize, "event")) (proof from \(b.oldSize))"
        case .witnessRequestRefused(let b):
            return "as a witness, refused a checkpoint of \(b.origin) (\(b.status)): \(b.reason)"
        case .personIndexCommitted(let b):
            return "person index committed over the first \(counted(b.indexedSize, "event")): \(counted(b.names, "name")), root \(b.root)"
        case .handoffRowsReceived(let b):
            let rows = "rows \(b.firstRow + 1) to \(b.firstRow + b.chunkRows) of \(b.rowCount) (chunk \(b.chunk + 1) of \(b.chunkCount))"
            return b.package.map { "handoff package \($0) \(rows) taken in" } ?? "unsigned handoff list \(rows) taken in"
        case .applyStarted(let b):
            let what = b.undoOf.map { "undo of apply run \($0)" } ?? "apply"
            let columns = b.mapped.map { "\($0.value.rawValue) → \($0.column)" }.joined(separator: ", ")
            return
                "\(what) to \(b.targetKind.rawValue) \(b.target), table \(b.table) (key \(b.keyColumn); \(columns)): \(counted(b.userCount, "user"))"
        case .applyIntended(let b) where b.lacksRows:
            return "apply batch \(b.batch) intended: \(counted(b.rowCount, "account"))"
                + (b.collisionCount == 0 ? "" : " (collision \(b.collisionCount))")
        case .applyIntended(let b):
            let planned = b.rows.flatMap { $0.cells.map(\.planned) }
            let counts = ApplyPlanned.allCases.compactMap { p in
                let n = planned.filter { $0 == p }.count
                return n == 0 ? nil : "\(p.rawValue) \(n)"
            }
            return "apply batch \(b.batch) intended: \(counted(b.rows.count, "account")) (" + counts.joined(separator: ", ") + ")"
        case .applySettled(let b):
            guard b.committed else { return "apply batch \(b.batch) did not commit" + (b.recovered ? " (found after an interruption)" : "") }
            guard !b.lacksRows else {
                return "apply batch \(b.batch) committed" + (b.recovered ? " (found after an interruption)" : "")
                    + ": \(counted(b.rowCount, "account"))"
            }
            let outcomes = b.rows.flatMap { $0.outcomes.map(\.outcome) }
            let counts = ApplyOutcome.allCases.compactMap { o in
                let n = outcomes.filter { $0 == o }.count
                return n == 0 ? nil : "\(o.rawValue) \(n)"
            }
            return "apply batch \(b.batch) committed" + (b.recovered ? " (found after an interruption)" : "") + ": " + counts.joined(separator: ", ")
        }
    }

    /// The HTTP tries one failure event records, in words ("1 HTTP try", "3 HTTP tries"):
    /// not to be confused with a user's `attempts`, the events recorded for them.
    static func tries(_ n: Int) -> String { n == 1 ? "1 HTTP try" : "\(n) HTTP tries" }
}
