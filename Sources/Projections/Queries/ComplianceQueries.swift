import Ledger

/// The questions the query CLI answers, over a ``ProjectionSnapshot`` (now or as of a time).
public struct ComplianceQueries {
    /// The projections to answer from.
    public let snapshot: any ProjectionSnapshot
    /// The moment the answer is for (now, or `--as-of`), for days left.
    public let time: Timestamp
    /// Opens sealed email addresses; nil leaves them out.
    public let sealer: Sealer?

    public init(snapshot: any ProjectionSnapshot, time: Timestamp, sealer: Sealer?) {
        self.snapshot = snapshot
        self.time = time
        self.sealer = sealer
    }

    /// Users whose migration step is done, in the order they migrated.
    public func migrated(into sink: any RowSink) throws {
        let window = try snapshot.window()
        let rows = try RowStream(["account_id", "sender_sub", "transfer_sub", "recipient_sub", "migrated_at", "recorded_at", "via", "before_deadline"], into: sink)
        try snapshot.forEachMigratedUser { u in
            try rows.append([
                "account_id": cell(u.accountID), "sender_sub": cell(u.senderSub), "transfer_sub": cell(u.transferSub), "recipient_sub": cell(u.recipientSub),
                "migrated_at": cell(u.migratedAt), "recorded_at": cell(u.migratedRecordedAt), "via": cell(u.migratedVia?.name),
                "before_deadline": beforeDeadline(u, window),
            ])
        }
        try rows.finish()
    }

    /// Users not yet migrated (never tried, or whose last attempt failed), with days left
    /// and the last error.
    public func pending(into sink: any RowSink) throws {
        let window = try snapshot.window()
        let rows = try RowStream(["account_id", "sender_sub", "transfer_sub", "recipient_sub", "status", "attempts", "last_attempt_at", "last_error_class", "last_error", "days_left"], into: sink)
        try snapshot.forEachUser { u in
            guard u.status == .pending || u.status == .failed else { return }
            try rows.append([
                "account_id": cell(u.accountID), "sender_sub": cell(u.senderSub), "transfer_sub": cell(u.transferSub), "recipient_sub": cell(u.recipientSub),
                "status": .text(u.status.name), "attempts": .int(u.attempts), "last_attempt_at": cell(u.lastAttemptAt),
                "last_error_class": cell(u.lastErrorClass), "last_error": cell(u.lastError), "days_left": window.map { .int($0.daysLeft(at: time)) } ?? .null,
            ])
        }
        try rows.finish()
    }

    /// Users Apple told us about (a notification, a sign-in without `transfer_sub`) whom no
    /// migration step ever named: kept, and listed here for someone to look into.
    public func unmatched(into sink: any RowSink) throws {
        let rows = try RowStream(["sender_sub", "recipient_sub", "notifications", "email_forwarding", "consent_revoked_at", "account_deleted_at", "erased_at", "first_sequence", "last_sequence"], into: sink)
        try snapshot.forEachUser { u in
            guard u.status == .unmatched else { return }
            try rows.append([
                "sender_sub": cell(u.senderSub), "recipient_sub": cell(u.recipientSub), "notifications": .int(u.notifications),
                "email_forwarding": forwarding(u), "consent_revoked_at": cell(u.consentRevokedAt), "account_deleted_at": cell(u.accountDeletedAt),
                "erased_at": cell(u.erasedAt), "first_sequence": .int(Int(u.firstSequence)), "last_sequence": .int(Int(u.lastSequence)),
            ])
        }
        try rows.finish()
    }

    /// Users whose last attempt failed, with the failure's class and message.
    public func failures(into sink: any RowSink) throws {
        let rows = try RowStream(["account_id", "sender_sub", "transfer_sub", "recipient_sub", "attempts", "last_attempt_at", "error_class", "error"], into: sink)
        try snapshot.forEachUser { u in
            guard u.status == .failed else { return }
            try rows.append([
                "account_id": cell(u.accountID), "sender_sub": cell(u.senderSub), "transfer_sub": cell(u.transferSub), "recipient_sub": cell(u.recipientSub),
                "attempts": .int(u.attempts), "last_attempt_at": cell(u.lastAttemptAt), "error_class": cell(u.lastErrorClass), "error": cell(u.lastError),
            ])
        }
        try rows.finish()
    }

    /// Failed users counted by failure class.
    public func failuresByClass(into sink: any RowSink) throws {
        var counts: [String: Int] = [:]
        try snapshot.forEachUser { u in
            guard u.status == .failed else { return }
            counts[u.lastErrorClass ?? "unknown", default: 0] += 1
        }
        let rows = try RowStream(["error_class", "users"], into: sink)
        for (name, n) in counts.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) { try rows.append(["error_class": .text(name), "users": .int(n)]) }
        try rows.finish()
    }

    /// The columns of ``state()`` and ``user(_:)``.
    public static let stateColumns = [
        "user_key", "account_id", "sender_sub", "transfer_sub", "recipient_sub", "target_team", "status", "migrated_at", "migrated_recorded_at", "migrated_via",
        "before_deadline", "email", "is_private_email", "email_forwarding", "consent_revoked_at", "account_deleted_at", "erased_at",
        "attempts", "last_attempt_at", "last_error_class", "last_error", "notifications", "first_sequence", "last_sequence",
    ]

    /// Every user with every projected field.
    public func state(into sink: any RowSink) throws {
        let window = try snapshot.window()
        let rows = try RowStream(ComplianceQueries.stateColumns, into: sink)
        try snapshot.forEachUser { try rows.append(try stateRow($0, window: window)) }
        try rows.finish()
    }

    /// The given users with every projected field, in the order given: the rows of
    /// ``state(into:)`` for just these users.
    public func state(of users: [UserState], into sink: any RowSink) throws {
        let window = try snapshot.window()
        let rows = try RowStream(ComplianceQueries.stateColumns, into: sink)
        for u in users { try rows.append(try stateRow(u, window: window)) }
        try rows.finish()
    }

    /// The user an identifier of any kind names, with every projected field; nil if unknown.
    public func user(_ identifier: String) throws -> (state: UserState, row: QueryTable)? {
        guard let u = try snapshot.user(matching: identifier) else { return nil }
        var table = QueryTable(columns: ComplianceQueries.stateColumns)
        table.append(try stateRow(u, window: try snapshot.window()))
        return (u, table)
    }

    /// The transfer window: accepted at, deadline, days left, open or closed.
    public func window(into sink: any RowSink) throws {
        let rows = try RowStream(["accepted_at", "deadline", "window_days", "days_left", "open"], into: sink)
        if let w = try snapshot.window() {
            try rows.append([
                "accepted_at": .time(w.acceptedAt), "deadline": .time(w.deadline), "window_days": .int(w.windowDays),
                "days_left": .int(w.daysLeft(at: time)), "open": .bool(w.isOpen(at: time)),
            ])
        }
        try rows.finish()
    }

    private func stateRow(_ u: UserState, window: TransferWindow?) throws -> KeyValuePairs<String, QueryTable.Cell> {
        [
            "user_key": .int(Int(u.key)), "account_id": cell(u.accountID), "sender_sub": cell(u.senderSub), "transfer_sub": cell(u.transferSub),
            "recipient_sub": cell(u.recipientSub), "target_team": cell(u.targetTeam), "status": .text(u.status.name),
            "migrated_at": cell(u.migratedAt), "migrated_recorded_at": cell(u.migratedRecordedAt), "migrated_via": cell(u.migratedVia?.name),
            "before_deadline": beforeDeadline(u, window), "email": try emailCell(u), "is_private_email": u.isPrivateEmail.map(QueryTable.Cell.bool) ?? .null,
            "email_forwarding": forwarding(u), "consent_revoked_at": cell(u.consentRevokedAt), "account_deleted_at": cell(u.accountDeletedAt),
            "erased_at": cell(u.erasedAt), "attempts": .int(u.attempts), "last_attempt_at": cell(u.lastAttemptAt),
            "last_error_class": cell(u.lastErrorClass), "last_error": cell(u.lastError), "notifications": .int(u.notifications),
            "first_sequence": .int(Int(u.firstSequence)), "last_sequence": .int(Int(u.lastSequence)),
        ]
    }

    /// Whether Apple forwards the user's email: enabled, disabled, or null if never told.
    private func forwarding(_ u: UserState) -> QueryTable.Cell {
        cell(u.emailForwarding.map { $0 ? "enabled" : "disabled" })
    }

    /// Whether the user migrated before the window's deadline; null without a window or migration.
    private func beforeDeadline(_ u: UserState, _ window: TransferWindow?) -> QueryTable.Cell {
        guard let window, let migratedAt = u.migratedAt else { return .null }
        return .bool(migratedAt < window.deadline)
    }

    /// The email in clear; `(erased)` once the user was erased (their key destroyed, which is
    /// the only way a key store loses a key, so also as of a time before the erasure);
    /// `(sealed: no key)` in a copy made without keys; or empty.
    private func emailCell(_ u: UserState) throws -> QueryTable.Cell {
        if u.erasedAt != nil { return .text("(erased)") }
        guard let sealed = u.email else { return .null }
        guard let sealer else { return .text("(sealed)") }
        guard sealer.keyStore != nil else { return .text("(sealed: no key)") }
        return .text(try sealer.open(sealed) ?? "(erased)")
    }

    private func cell(_ s: String?) -> QueryTable.Cell { s.map(QueryTable.Cell.text) ?? .null }
    private func cell(_ t: Timestamp?) -> QueryTable.Cell { t.map(QueryTable.Cell.time) ?? .null }
}

extension ComplianceQueries {
    /// The answers collected in memory, for those known to be small and for tests.
    public func migrated() throws -> QueryTable { try QueryTable.collect(migrated(into:)) }
    public func pending() throws -> QueryTable { try QueryTable.collect(pending(into:)) }
    public func unmatched() throws -> QueryTable { try QueryTable.collect(unmatched(into:)) }
    public func failures() throws -> QueryTable { try QueryTable.collect(failures(into:)) }
    public func failuresByClass() throws -> QueryTable { try QueryTable.collect(failuresByClass(into:)) }
    public func state() throws -> QueryTable { try QueryTable.collect(state(into:)) }
    public func window() throws -> QueryTable { try QueryTable.collect(window(into:)) }
}
