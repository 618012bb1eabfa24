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
            table.rows.append([cell(u.accountID), cell(u.senderSub), cell(u.transferSub), cell(u.recipientSub), cell(u.migratedAt), cell(u.migratedRecordedAt),
                               cell(u.migratedVia?.name), beforeDeadline(u, window)])
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
            table.rows.append([cell(u.accountID), cell(u.senderSub), cell(u.transferSub), cell(u.recipientSub), .text(u.status.name), .int(u.attempts),
                               cell(u.lastAttemptAt), cell(u.lastErrorClass), cell(u.lastError), window.map { .int($0.daysLeft(at: time)) } ?? .null])
        }
        return table
    }

    /// Users Apple told us about (a notification, a sign-in without `transfer_sub`) whom no
    /// migration step ever named: kept, and listed here for someone to look into.
    public func unmatched() throws -> QueryTable {
        var table = QueryTable(columns: ["sender_sub", "recipient_sub", "notifications", "email_forwarding", "consent_revoked_at", "account_deleted_at", "erased_at", "first_sequence", "last_sequence"])
        try snapshot.forEachUser { u in
            guard u.status == .unmatched else { return }
            table.rows.append([cell(u.senderSub), cell(u.recipientSub), .int(u.notifications), cell(u.emailForwarding.map { $0 ? "enabled" : "disabled" }),
                               cell(u.consentRevokedAt), cell(u.accountDeletedAt), cell(u.erasedAt), .int(Int(u.firstSequence)), .int(Int(u.lastSequence))])
        }
        return table
    }

    /// Users whose last attempt failed, with the failure's class and message.
    public func failures() throws -> QueryTable {
        var table = QueryTable(columns: ["account_id", "sender_sub", "transfer_sub", "recipient_sub", "attempts", "last_attempt_at", "error_class", "error"])
        try snapshot.forEachUser { u in
            guard u.status == .failed else { return }
            table.rows.append([cell(u.accountID), cell(u.senderSub), cell(u.transferSub), cell(u.recipientSub), .int(u.attempts),
                               cell(u.lastAttemptAt), cell(u.lastErrorClass), cell(u.lastError)])
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
        for (name, n) in counts.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) { table.rows.append([.text(name), .int(n)]) }
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
        try snapshot.forEachUser { table.rows.append(try stateRow($0, window: window)) }
        return table
    }

    /// The user an identifier of any kind names, with every projected field; nil if unknown.
    public func user(_ identifier: String) throws -> (state: UserState, row: QueryTable)? {
        guard let u = try snapshot.user(matching: identifier) else { return nil }
        return (u, QueryTable(columns: ComplianceQueries.stateColumns, rows: [try stateRow(u, window: try snapshot.window())]))
    }

    /// The transfer window: accepted at, deadline, days left, open or closed.
    public func window() throws -> QueryTable {
        var table = QueryTable(columns: ["accepted_at", "deadline", "window_days", "days_left", "open"])
        if let w = try snapshot.window() {
            table.rows.append([.time(w.acceptedAt), .time(w.deadline), .int(w.windowDays), .int(w.daysLeft(at: time)), .bool(w.isOpen(at: time))])
        }
        return table
    }

    private func stateRow(_ u: UserState, window: TransferWindow?) throws -> [QueryTable.Cell] {
        return [
            .int(Int(u.key)), cell(u.accountID), cell(u.senderSub), cell(u.transferSub), cell(u.recipientSub), cell(u.targetTeam), .text(u.status.name),
            cell(u.migratedAt), cell(u.migratedRecordedAt), cell(u.migratedVia?.name), beforeDeadline(u, window), try emailCell(u), u.isPrivateEmail.map(QueryTable.Cell.bool) ?? .null,
            u.emailForwarding.map { .text($0 ? "enabled" : "disabled") } ?? .null, cell(u.consentRevokedAt), cell(u.accountDeletedAt), cell(u.erasedAt),
            .int(u.attempts), cell(u.lastAttemptAt), cell(u.lastErrorClass), cell(u.lastError), .int(u.notifications),
            .int(Int(u.firstSequence)), .int(Int(u.lastSequence)),
        ]
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
