import Ledger

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

    /// The matching events, read through index lookups where a filter allows.
    public func run(on ledger: Ledger) throws -> [RecordedEvent] {
        try ledger.read { view in
            let last = try until.map { try view.lastSequence(recordedAtOrBefore: $0) } ?? view.head().sequence
            let first = try since.map { try view.lastSequence(recordedAtOrBefore: Timestamp(microseconds: $0.microseconds - 1)) + 1 } ?? 1
            var candidates: [UInt64]?
            if let identifier {
                var set = Set<UInt64>()
                for kind in IdentifierKind.allCases { set.formUnion(try view.sequences(for: Identifier(kind, identifier))) }
                candidates = set.sorted()
            } else if !types.isEmpty {
                var set = Set<UInt64>()
                for type in types { set.formUnion(try view.sequences(of: type)) }
                candidates = set.sorted()
            }
            var events: [RecordedEvent] = []
            if let candidates {
                for seq in candidates where seq >= first && seq <= last {
                    if let event = try view.event(seq), types.isEmpty || types.contains(event.type) { events.append(event) }
                }
            } else {
                let start = limit.map { last >= UInt64($0) ? max(first, last - UInt64($0) + 1) : first } ?? first
                try view.forEachEvent(from: start, through: last) { events.append($0) }
            }
            if let limit, events.count > limit { events.removeFirst(events.count - limit) }
            return events
        }
    }

    /// Every event that names one of `user`'s identifiers, recorded up to `until`, in order.
    public static func history(of user: UserState, until: Timestamp? = nil, in ledger: Ledger) throws -> [RecordedEvent] {
        try ledger.read { view in
            let last = try until.map { try view.lastSequence(recordedAtOrBefore: $0) } ?? view.head().sequence
            var sequences = Set<UInt64>()
            for id in user.identifiers { sequences.formUnion(try view.sequences(for: id)) }
            return try sequences.sorted().filter { $0 <= last }.compactMap { try view.event($0) }
        }
    }

    /// The events as a table: one row each, the body as canonical JSON.
    public static func table(_ events: [RecordedEvent]) -> QueryTable {
        var table = QueryTable(columns: ["seq", "recorded_at", "occurred_at", "type", "identifiers", "summary"])
        for e in events {
            table.append([
                "seq": .int(Int(e.sequence)), "recorded_at": .time(e.recordedAt), "occurred_at": e.occurredAt.map(QueryTable.Cell.time) ?? .null,
                "type": .text(e.type.rawValue), "identifiers": .text(e.identifiers.all.map(\.description).joined(separator: " ")), "summary": .text(summary(e)),
            ])
        }
        return table
    }

    /// A one-line description of what an event says.
    public static func summary(_ e: RecordedEvent) -> String {
        switch e.body {
        case .ledgerCreated(let b): return "\(b.role.rawValue) ledger for team \(b.teamID), clients \(b.clientIDs.joined(separator: ","))"
        case .transferAccepted(let b): return "transfer accepted \(b.acceptedAt.date), deadline \(b.deadline.rfc3339)"
        case .runStarted(let b): return "\(b.command) started" + (b.userCount.map { ", \($0) users" } ?? "") + (b.targetTeam.map { ", target \($0)" } ?? "")
        case .runFinished(let b): return "\(b.command) finished, exit \(b.exitStatus), " + b.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        case .accessTokenIssued(let b): return "token \(b.fingerprint) for \(b.clientID), expires \(b.expiresAt.rfc3339)"
        case .accessTokenFailed(let b): return "token refused: \(b.failure.kind.rawValue): \(b.failure.message)"
        case .transferIDGenerated(let b): return "generated for target \(b.targetTeam)"
        case .transferIDGenerationFailed(let b): return "target \(b.targetTeam): \(b.failure.kind.rawValue) after \(b.failure.attempts) attempt(s): \(b.failure.message)"
        case .transferIDExchanged(let b): return "exchanged" + (b.isPrivateEmail == true ? ", private relay email" : "")
        case .transferIDExchangeFailed(let b): return "\(b.failure.kind.rawValue) after \(b.failure.attempts) attempt(s): \(b.failure.message)"
        case .signInVerified(let b): return "sign-in for \(b.audience)" + (e.identifiers.transferSub != nil ? " with transfer_sub" : "")
        case .signInRejected(let b), .notificationRejected(let b): return "rejected: \(b.reason): \(b.detail)"
        case .notificationReceived(let b): return b.kind.rawValue + " at \(b.eventTime.rfc3339)"
        case .userErased(let b): return "erased (\(b.reason)), \(b.keysDestroyed) key(s) destroyed"
        }
    }
}
