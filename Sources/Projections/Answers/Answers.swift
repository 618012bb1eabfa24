import Basics
import Ledger

/// The answers of `handover query` and `handover window`, declared once: their columns, in
/// order. The queries (``ComplianceQueries``, ``EventQuery``) produce the rows; the renderers
/// write them; the column reference (`schemas/answers.md`) is made from these declarations.
public enum Answers {
    private typealias U = UserColumns

    public static let migrated = Answer<UserRow>(
        "migrated", source: "handover query migrated",
        meaning: "A user whose migration step is done, in the order they migrated.",
        columns: U.identifiers + [U.migratedAt, U.migratedRecordedAt, U.migratedVia, U.beforeDeadline])

    public static let pending = Answer<UserRow>(
        "pending", source: "handover query pending",
        meaning: "A user not yet migrated: never tried, or whose last attempt failed.",
        columns: U.identifiers + [U.status, U.attempts, U.lastAttemptAt, U.lastErrorClass, U.lastError, U.daysLeft])

    public static let failures = Answer<UserRow>(
        "failures", source: "handover query failures",
        meaning: "A user whose last attempt failed, with the failure.",
        columns: U.identifiers + [U.attempts, U.lastAttemptAt, U.lastErrorClass, U.lastError])

    public static let failuresByClass = Answer<FailureClassRow>(
        "failures by class", source: "handover query failures --by-class",
        meaning: "Failed users counted by the class of their last failure, most first.",
        columns: [FailureClassRow.Columns.lastErrorClass, FailureClassRow.Columns.users])

    public static let unmatched = Answer<UserRow>(
        "unmatched", source: "handover query unmatched",
        meaning: "A user Apple told us about (a notification, a sign-in without transfer_sub) whom no migration step named.",
        columns: [
            U.senderSub, U.recipientSub, U.notifications, U.emailForwarding, U.consentRevokedAt, U.accountDeletedAt, U.erasedAt, U.firstSequence,
            U.lastSequence,
        ])

    public static let state = Answer<UserRow>(
        "state", source: "handover query state",
        meaning: "Every user with every projected field.", columns: U.all)

    /// `query user`: the state's columns and the user's history.
    public static let user = Answer<UserWithHistory>(
        "user", source: "handover query user ID",
        meaning: "One user with every projected field and every event that names them.",
        columns: U.all.map { $0.reading { (row: UserWithHistory) in row.user } }
            + [UserWithHistory.history])

    public static let events = Answer<EventRow>(
        "events", source: "handover query events",
        meaning: "An event of the log, oldest first.",
        columns: [
            EventRow.Columns.sequence, EventRow.Columns.recordedAt, EventRow.Columns.occurredAt, EventRow.Columns.type,
            EventRow.Columns.identifiers, EventRow.Columns.summary,
        ])

    public static let window = Answer<WindowRow>(
        "window", source: "handover window",
        meaning: "The transfer window at the time asked (no row before one is recorded).",
        columns: [
            WindowRow.Columns.acceptedAt, WindowRow.Columns.deadline, WindowRow.Columns.windowDays, WindowRow.Columns.daysLeft,
            WindowRow.Columns.open,
        ])

    /// Every answer this module declares, for the column reference and its checks.
    public static let all: [AnswerDescription] = [
        migrated.description, pending.description, failures.description, failuresByClass.description, unmatched.description,
        state.description, user.description, events.description, window.description,
    ]
}
