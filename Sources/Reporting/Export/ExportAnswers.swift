import Ledger
import Projections

/// The export's three tables, declared once: every export format (SQLite, PostgreSQL, CSV, JSON
/// lines) writes these columns in this order, and `schemas/export-sqlite.sql` and
/// `schemas/export-postgres.sql` are held equal to them by a test. They are listed here, not
/// taken from a query's answer, so a change to `query state` cannot move an export's layout:
/// a change here moves ``ExportSchema/version``.
public enum ExportAnswers {
    private typealias U = UserColumns

    /// `events`: every event of the log.
    public static let events = Answer<ExportedEvent>(
        "export events", source: "handover export (events)",
        meaning: "One event of the log, flat columns for filtering and joining and the whole event as JSON.",
        columns: ExportedEvent.columns)

    /// `users`: each user's current state; `email` only with personal data, in clear.
    public static let users = Answer<UserRow>(
        "export users", source: "handover export (users)",
        meaning: "Each user's current state, as `query state` has it; `email` only with --include-personal-data, and only in clear.",
        columns: [
            U.userKey, U.accountID, U.senderSub, U.transferSub, U.recipientSub, U.targetTeam, U.status, U.migratedAt, U.migratedRecordedAt,
            U.migratedVia,
            U.beforeDeadline, U.email, U.isPrivateEmail, U.emailForwarding, U.consentRevokedAt, U.accountDeletedAt, U.erasedAt,
            U.attempts, U.lastAttemptAt, U.lastErrorClass, U.lastError, U.notifications, U.firstSequence, U.lastSequence, U.applyOutcome, U.appliedAt,
            U.emailApplyOutcome, U.emailAppliedAt, U.emailForwardingApplyOutcome, U.emailForwardingAppliedAt,
        ])

    /// `event_rows`: the rows events keep beside them (handoff packages' rows, apply batches'
    /// accounts), which the events' JSON commits to by their Merkle root only.
    public static let eventRows = Answer<ExportedRow>(
        "export event_rows", source: "handover export (event_rows)",
        meaning: "One row a \"handoff rows received\", \"apply intended\" or \"apply settled\" event keeps beside it, as kept.",
        columns: ExportedRow.columns)

    /// The three tables, for the column reference.
    public static let all = [events.description, users.description, eventRows.description]
}
