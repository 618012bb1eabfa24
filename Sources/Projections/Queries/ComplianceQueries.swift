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
    public func migrated() throws -> QueryTable {
        let window = try snapshot.window()
        var users = try snapshot.allUsers().filter { $0.status.isDone }
        users.sort { ($0.migratedAt ?? $0.lastAttemptAt ?? Timestamp(microseconds: 0), $0.key) < ($1.migratedAt ?? $1.lastAttemptAt ?? Timestamp(microseconds: 0), $1.key) }
        var table = QueryTable(columns: ["account_id", "sender_sub", "transfer_sub", "recipient_sub", "migrated_at", "recorded_at", "via", "before_deadline"])
        for u in users {
            table.append([
                "account_id": cell(u.accountID), "sender_sub": cell(u.senderSub), "transfer_sub": cell(u.transferSub), "recipient_sub": cell(u.recipientSub),
                "migrated_at": cell(u.migratedAt), "recorded_at": cell(u.migratedRecordedAt), "via": cell(u.migratedVia?.name),
                "before_deadline": beforeDeadline(u, window),
            ])
        }
        return table
    }

    /// Users not yet migrated (never tried, or whose last attempt failed), with days left
    /// and the last error.
    public func pending() throws -> QueryTable {
        let window = try snapshot.window()
        var table = QueryTable(columns: ["account_id", "sender_sub", "transfer_sub", "recipient_sub", "status", "attempts", "last_attempt_at", "last_error_class", "last_error", "days_left"])
        try snapshot.forEachUser { u in
            guard u.status == .pending || u.status == .failed else { return }
            table.append([
                "account_id": cell(u.accountID), "sender_sub": cell(u.senderSub), "transfer_sub": cell(u.transferSub), "recipient_sub": cell(u.recipientSub),
                "status": .text(u.status.name), "attempts": .int(u.attempts), "last_attempt_at": cell(u.lastAttemptAt),
                "last_error_class": cell(u.lastErrorClass), "last_error": cell(u.lastError), "days_left": window.map { .int($0.daysLeft(at: time)) } ?? .null,
            ])
        }
        return table
    }

    /// Users Apple told us about (a notification, a sign-in without `transfer_sub`) whom no
    /// migration step ever named: kept, and listed here for someone to look into.
    public func unmatched() throws -> QueryTable {
        var table = QueryTable(columns: ["sender_sub", "recipient_sub", "notifications", "email_forwarding", "consent_revoked_at", "account_deleted_at", "erased_at", "first_sequence", "last_sequence"])
        try snapshot.forEachUser { u in
            guard u.status == .unmatched else { return }
            table.append([
                "sender_sub": cell(u.senderSub), "recipient_sub": cell(u.recipientSub), "notifications": .int(u.notifications),
                "email_forwarding": forwarding(u), "consent_revoked_at": cell(u.consentRevokedAt), "account_deleted_at": cell(u.accountDeletedAt),
                "erased_at": cell(u.erasedAt), "first_sequence": .int(Int(u.firstSequence)), "last_sequence": .int(Int(u.lastSequence)),
            ])
        }
        return table
    }

    /// Users whose last attempt failed, with the failure's class and message.
    public func failures() throws -> QueryTable {
        var table = QueryTable(columns: ["account_id", "sender_sub", "transfer_sub", "recipient_sub", "attempts", "last_attempt_at", "error_class", "error"])
        try snapshot.forEachUser { u in
            guard u.status == .failed else { return }
            table.append([
                "account_id": cell(u.accountID), "sender_sub": cell(u.senderSub), "transfer_sub": cell(u.transferSub), "recipient_sub": cell(u.recipientSub),
                "attempts": .int(u.attempts), "last_attempt_at": cell(u.lastAttemptAt), "error_class": cell(u.lastErrorClass), "error": cell(u.lastError),
            ])
        }
        return table
    }

    /// Failed users counted by failure class.
    public func failuresByClass() throws -> QueryTable {
        var counts: [String: Int] = [:]
        try snapshot.forEachUser { u in
            guard u.status == .failed else { return }
            counts[u.lastErrorClass ?? "unknown", default: 0] += 1
        }
        var table = QueryTable(columns: ["error_class", "users"])
        for (name, n) in counts.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) { table.append(["error_class": .text(name), "users": .int(n)]) }
        return table
    }

    /// The columns of ``state()`` and ``user(_:)``.
    public static let stateColumns = [
        "user_key", "account_id", "sender_sub", "transfer_sub", "recipient_sub", "target_team", "status", "migrated_at", "migrated_recorded_at", "migrated_via",
        "before_deadline", "email", "is_private_email", "email_forwarding", "consent_revoked_at", "account_deleted_at", "erased_at",
        "attempts", "last_attempt_at", "last_error_class", "last_error", "notifications", "first_sequence", "last_sequence",
    ]

    /// Every user with every projected field.
    public func state() throws -> QueryTable {
        let window = try snapshot.window()
        var table = QueryTable(columns: ComplianceQueries.stateColumns)
        try snapshot.forEachUser { table.append(try stateRow($0, window: window)) }
        return table
    }

    /// The user an identifier of any kind names, with every projected field; nil if unknown.
    public func user(_ identifier: String) throws -> (state: UserState, row: QueryTable)? {
        guard let u = try snapshot.user(matching: identifier) else { return nil }
        var table = QueryTable(columns: ComplianceQueries.stateColumns)
        table.append(try stateRow(u, window: try snapshot.window()))
        return (u, table)
    }

    /// The transfer window: accepted at, deadline, days left, open or closed.
    public func window() throws -> QueryTable {
        var table = QueryTable(columns: ["accepted_at", "deadline", "window_days", "days_left", "open"])
        if let w = try snapshot.window() {
            table.append([
                "accepted_at": .time(w.acceptedAt), "deadline": .time(w.deadline), "window_days": .int(w.windowDays),
                "days_left": .int(w.daysLeft(at: time)), "open": .bool(w.isOpen(at: time)),
            ])
        }
        return table
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

    /// The email in clear, `(erased)` once the user's key is destroyed, or empty.
    private func emailCell(_ u: UserState) throws -> QueryTable.Cell {
        if u.erasedAt != nil { return .text("(erased)") }
        guard let sealed = u.email else { return .null }
        guard let sealer else { return .text("(sealed)") }
        return .text(try sealer.open(sealed) ?? "(erased)")
    }

    private func cell(_ s: String?) -> QueryTable.Cell { s.map(QueryTable.Cell.text) ?? .null }
    private func cell(_ t: Timestamp?) -> QueryTable.Cell { t.map(QueryTable.Cell.time) ?? .null }
}
