import Ledger

/// Every column an answer about users can show, each declared once: the answers (``Answers``)
/// and the export (`ExportAnswers`) list the ones they carry.
public enum UserColumns {
    public typealias Column = AnswerColumn<UserRow>

    public static let userKey = Column("user_key", .integer, optional: false, "The projection's own key for the user, assigned in fold order.") {
        .int(Int($0.state.key))
    }
    public static let accountID: Column = SharedColumns.accountID { $0.state.accountID }
    public static let senderSub: Column = SharedColumns.senderSub { $0.state.senderSub }
    public static let transferSub: Column = SharedColumns.transferSub { $0.state.transferSub }
    public static let recipientSub: Column = SharedColumns.recipientSub { $0.state.recipientSub }
    public static let targetTeam = Column("target_team", .text, "The team the user is transferred to (team A's ledger).") {
        .text($0.state.targetTeam)
    }
    public static let status = Column(
        "status", .text, optional: false,
        "Where the user stands: unmatched, pending, received (team B: handed over, not tried yet), failed, transfer-id-generated or migrated."
    ) { .text($0.state.status.name) }
    public static let migratedAt = Column(
        "migrated_at", .time, "When the user's migration step happened: a sign-in's `iat`, else when it was recorded."
    ) { .time($0.state.migratedAt) }
    public static let migratedRecordedAt = Column("migrated_recorded_at", .time, "When the ledger recorded the event that migrated the user.") {
        .time($0.state.migratedRecordedAt)
    }
    public static let migratedVia = Column("migrated_via", .text, "How the step was done: transfer-id-generation, exchange or sign-in.") {
        .text($0.state.migratedVia?.name)
    }
    public static let applyOutcome = Column(
        "apply_outcome", .text,
        "What `apply` last did to the user's `sub` in the app's accounts: applied, already, no-account, collision, changed-meanwhile or undone; null if never applied. Beside `status`, whose meaning it does not change."
    ) { .text($0.state.applied.recipientSub?.outcome.rawValue) }
    public static let appliedAt = Column("applied_at", .time, "When the ledger recorded that outcome.") { .time($0.state.applied.recipientSub?.at) }
    public static let emailApplyOutcome = Column(
        "email_apply_outcome", .text,
        "What `apply` last did to the account's email (`--set email=COLUMN`): applied (the relay address team B was given), already, kept (an address of the user's own, never overwritten), no-account, collision, changed-meanwhile or undone; null if never applied."
    ) { .text($0.state.applied.email?.outcome.rawValue) }
    public static let emailAppliedAt = Column("email_applied_at", .time, "When the ledger recorded that outcome.") {
        .time($0.state.applied.email?.at)
    }
    public static let emailForwardingApplyOutcome = Column(
        "email_forwarding_apply_outcome", .text,
        "What `apply` last did to the account's forwarding flag (`--set email_forwarding=COLUMN`): applied, already, no-account, changed-meanwhile or undone; null if never applied."
    ) { .text($0.state.applied.emailForwarding?.outcome.rawValue) }
    public static let emailForwardingAppliedAt = Column("email_forwarding_applied_at", .time, "When the ledger recorded that outcome.") {
        .time($0.state.applied.emailForwarding?.at)
    }
    public static let beforeDeadline = Column(
        "before_deadline", .boolean, "Whether the user migrated before the 60-day deadline; null without a window or a migration."
    ) { .bool($0.beforeDeadline) }
    public static let email: Column = SharedColumns.email { $0.email }
    public static let isPrivateEmail: Column = SharedColumns.isPrivateEmail { $0.state.isPrivateEmail }
    public static let emailForwarding = Column(
        "email_forwarding", .text, "Whether Apple forwards email to the relay address: enabled or disabled; null if never told."
    ) { .text($0.state.emailForwarding.map { $0 ? "enabled" : "disabled" }) }
    public static let consentRevokedAt = Column("consent_revoked_at", .time, "When the user revoked consent (Apple's `event_time`).") {
        .time($0.state.consentRevokedAt)
    }
    public static let accountDeletedAt = Column("account_deleted_at", .time, "When the user deleted their Apple Account (Apple's `event_time`).") {
        .time($0.state.accountDeletedAt)
    }
    public static let erasedAt = Column("erased_at", .time, "When the user's personal data was erased (their key destroyed).") {
        .time($0.state.erasedAt)
    }
    public static let attempts = Column(
        "attempts", .integer, optional: false,
        "Generation or exchange events recorded for the user, successes and failures (each may hold several HTTP tries)."
    ) { .int($0.state.attempts) }
    public static let lastAttemptAt = Column("last_attempt_at", .time, "When the last of those was recorded.") { .time($0.state.lastAttemptAt) }
    public static let lastErrorClass: Column = SharedColumns.lastErrorClass { $0.state.lastErrorClass?.rawValue }
    public static let lastError = Column("last_error", .text, "The last failure's message, as Apple or the transport gave it.") {
        .text($0.state.lastError)
    }
    public static let daysLeft: Column = SharedColumns.daysLeft { $0.daysLeft }
    public static let notifications = Column("notifications", .integer, optional: false, "Apple notifications received about the user.") {
        .int($0.state.notifications)
    }
    public static let firstSequence = Column("first_sequence", .integer, optional: false, "The first event that names the user.") {
        .int(Int($0.state.firstSequence))
    }
    public static let lastSequence = Column("last_sequence", .integer, optional: false, "The last event that changed the user.") {
        .int(Int($0.state.lastSequence))
    }

    /// The user's four identifiers.
    public static let identifiers = [accountID, senderSub, transferSub, recipientSub]

    /// Every column, in the order of `query state`.
    public static let all = [
        userKey, accountID, senderSub, transferSub, recipientSub, targetTeam, status, migratedAt, migratedRecordedAt, migratedVia,
        beforeDeadline, applyOutcome, appliedAt, emailApplyOutcome, emailAppliedAt, emailForwardingApplyOutcome, emailForwardingAppliedAt,
        email, isPrivateEmail, emailForwarding, consentRevokedAt, accountDeletedAt, erasedAt,
        attempts, lastAttemptAt, lastErrorClass, lastError, notifications, firstSequence, lastSequence,
    ]
}
