import Basics
import Ledger
import LogEngine
import Projections

/// The standard questions about a migration, answered from one picture of the ledger: now,
/// or as of a time (only what had been recorded by then).
///
/// The user figures come from the same ``ComplianceQueries`` the `query` commands run, so the
/// report and the queries cannot disagree; the notification figures come from the events.
public struct MigrationReport: Sendable {
    /// One day's migrations.
    public struct Day: Sendable, Equatable {
        /// YYYY-MM-DD (UTC).
        public var date: String
        public var migrated: Int
        /// Users migrated on this day or before.
        public var cumulative: Int

        /// The report's table of migrations per day.
        public static let answer = Answer<Day>(
            "report: migrations per day", source: "handover report",
            meaning: "One UTC day on which users migrated (when it happened).",
            columns: [
                AnswerColumn("date", .text, optional: false, "The day, YYYY-MM-DD (UTC).") { .text($0.date) },
                AnswerColumn("migrated", .integer, optional: false, "Users whose migration happened that day.") { .int($0.migrated) },
                AnswerColumn("cumulative", .integer, optional: false, "Users migrated that day or before.") { .int($0.cumulative) },
            ])
    }

    /// Notifications of one type.
    public struct NotificationFigures: Sendable, Equatable {
        /// Apple's notification type (`consent-revoked`, `email-disabled`, …).
        public var type: String
        public var received: Int
        /// Of those, about a migrated user and occurred after that user migrated.
        public var sinceMigration: Int
        /// Apple's event_time, first and last.
        public var firstOccurred: Timestamp?
        public var lastOccurred: Timestamp?
        /// When the ledger recorded them, first and last.
        public var firstRecorded: Timestamp?
        public var lastRecorded: Timestamp?

        /// The report's table of notifications by type.
        public static let answer = Answer<NotificationFigures>(
            "report: notifications by type", source: "handover report",
            meaning: "Apple notifications of one type: how many, and when they happened and were recorded.",
            columns: [
                AnswerColumn(
                    "notification_type", .text, optional: false,
                    "Apple's notification type (consent-revoked, account-delete, email-enabled, email-disabled)."
                ) { .text($0.type) },
                AnswerColumn("received", .integer, optional: false, "Notifications of the type received.") { .int($0.received) },
                AnswerColumn("since_migration", .integer, optional: false, "Of those, about a migrated user and dated after that user migrated.") {
                    .int($0.sinceMigration)
                },
                AnswerColumn("first_occurred", .time, "The earliest `event_time` Apple gave.") { .time($0.firstOccurred) },
                AnswerColumn("last_occurred", .time, "The latest `event_time` Apple gave.") { .time($0.lastOccurred) },
                AnswerColumn("first_recorded", .time, "When the ledger recorded the first.") { .time($0.firstRecorded) },
                AnswerColumn("last_recorded", .time, "When the ledger recorded the last.") { .time($0.lastRecorded) },
            ])
    }

    /// The ledger answered from.
    public var identity: LedgerCreated
    /// The time the answer is for: `--as-of`, or when the report was made.
    public var asOf: Timestamp
    /// Whether `asOf` was asked for (an answer about the past).
    public var isHistorical: Bool
    /// The last event the answer includes.
    public var throughSequence: UInt64
    public var window: TransferWindow?

    /// Users a migration step named (not counting unmatched ones).
    public var usersKnown: Int
    public var migrated: Int
    /// Migrated users by path (exchange, sign-in, transfer-id-generation), largest first.
    public var migratedByPath: [(path: String, users: Int)]
    /// Team B: users by what `apply` last did to their account in the app's database (empty before any apply).
    public var appliedByOutcome: [(outcome: String, users: Int)] = []
    /// Team B: users by what `apply` last did to their account's email column (empty before an
    /// apply that mapped it): relay addresses set, kept (an address of the user's own), collided.
    public var emailAppliedByOutcome: [(outcome: String, users: Int)] = []
    public var beforeDeadline: Int
    public var afterDeadline: Int
    /// First and last migration: when it happened and when it was recorded.
    public var firstMigration: (occurred: Timestamp, recorded: Timestamp?)?
    public var lastMigration: (occurred: Timestamp, recorded: Timestamp?)?
    public var days: [Day]

    /// `query pending`: not migrated yet, with days left and the last error.
    public var pending: [UserRow]
    /// `query failures --by-class`.
    public var failuresByClass: [FailureClassRow]
    /// `query unmatched`.
    public var unmatched: [UserRow]

    public var notifications: [NotificationFigures]
    /// Notifications per day of occurrence, per type.
    public var notificationDays: [(date: String, counts: [String: Int])]
    public var consentRevoked: Int
    public var accountsDeleted: Int
    public var usersErased: Int
    /// Notifications about users no migration step named.
    public var unmatchedNotifications: Int
    public var signInsRejected: Int
    public var notificationsRejected: Int
    /// Joined with the sender's ledger (`--sender`), when asked.
    public var bothHalves: BothHalves?

    /// Answers from the stored projections (now) or from the events recorded up to `asOf`.
    public static func make(ledger: Ledger, projection: UserProjection, asOf: Timestamp?) throws -> MigrationReport {
        let identity = try ledger.identity()
        return try projection.read(ledger, asOf: asOf) { snapshot, view in
            try make(identity: identity, snapshot: snapshot, view: view, time: asOf ?? .now(), historical: asOf != nil)
        }
    }

    private static func make(
        identity: LedgerCreated, snapshot: any ProjectionSnapshot, view: LogView, time: Timestamp, historical: Bool
    ) throws -> MigrationReport {
        let window = try snapshot.window()
        let through = try snapshot.checkpoint()
        var known = 0
        var before = 0
        var after = 0
        var consent = 0
        var deleted = 0
        var erased = 0
        var byPath: [String: Int] = [:]
        var byOutcome: [String: Int] = [:]
        var emailByOutcome: [String: Int] = [:]
        var perDay: [String: Int] = [:]
        var migrated = 0
        var first: (occurred: Timestamp, recorded: Timestamp?)?
        var last: (occurred: Timestamp, recorded: Timestamp?)?
        // One pass over the users for every figure and list (the answers' own rules).
        var pending: [UserRow] = []
        var unmatched: [UserRow] = []
        var failureCounts: [FailureClass?: Int] = [:]
        try snapshot.forEachUser { u in
            if ComplianceQueries.isPending(u) { pending.append(UserRow(u, window: window, time: time)) }
            if u.status == .unmatched { unmatched.append(UserRow(u, window: window, time: time)) }
            if u.status == .failed { failureCounts[u.lastErrorClass, default: 0] += 1 }
            if u.status != .unmatched { known += 1 }
            if u.consentRevokedAt != nil { consent += 1 }
            if u.accountDeletedAt != nil { deleted += 1 }
            if u.erasedAt != nil { erased += 1 }
            if let cell = u.applied.recipientSub { byOutcome[cell.outcome.rawValue, default: 0] += 1 }
            if let cell = u.applied.email { emailByOutcome[cell.outcome.rawValue, default: 0] += 1 }
            guard u.status.isDone, let at = u.migratedAt else { return }
            byPath[u.migratedVia?.name ?? "unknown", default: 0] += 1
            perDay[at.date, default: 0] += 1
            migrated += 1
            if first.map({ at < $0.occurred }) ?? true { first = (at, u.migratedRecordedAt) }
            if last.map({ at >= $0.occurred }) ?? true { last = (at, u.migratedRecordedAt) }
            if let window { if window.hasClosed(at: at) { after += 1 } else { before += 1 } }
        }
        var cumulative = 0
        let days = perDay.keys.sorted().map { date in
            cumulative += perDay[date]!
            return Day(date: date, migrated: perDay[date]!, cumulative: cumulative)
        }
        let unmatchedNotifications = unmatched.reduce(0) { $0 + $1.state.notifications }
        let (notifications, notificationDays) = try notificationFigures(view: view, snapshot: snapshot, through: through)
        return MigrationReport(
            identity: identity, asOf: time, isHistorical: historical, throughSequence: through, window: window,
            usersKnown: known, migrated: migrated,
            migratedByPath: byPath.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { ($0.key, $0.value) },
            appliedByOutcome: ApplyOutcome.allCases.compactMap { o in byOutcome[o.rawValue].map { (o.rawValue, $0) } },
            emailAppliedByOutcome: ApplyOutcome.allCases.compactMap { o in emailByOutcome[o.rawValue].map { (o.rawValue, $0) } },
            beforeDeadline: before, afterDeadline: after, firstMigration: first, lastMigration: last, days: days,
            pending: pending, failuresByClass: ComplianceQueries.failureClassRows(failureCounts), unmatched: unmatched,
            notifications: notifications, notificationDays: notificationDays,
            consentRevoked: consent, accountsDeleted: deleted, usersErased: erased, unmatchedNotifications: unmatchedNotifications,
            signInsRejected: try view.sequences(of: .signInRejected).filter { $0 <= through }.count,
            notificationsRejected: try view.sequences(of: .notificationRejected).filter { $0 <= through }.count)
    }

    private static func notificationFigures(
        view: LogView, snapshot: any ProjectionSnapshot, through: UInt64
    ) throws
        -> ([NotificationFigures], [(date: String, counts: [String: Int])])
    {
        var figures: [String: NotificationFigures] = [:]
        var perDay: [String: [String: Int]] = [:]
        for sequence in try view.sequences(of: .notificationReceived) where sequence <= through {
            guard let event = try view.event(sequence), case .notificationReceived(let body) = event.body else { continue }
            let type = body.kind.rawValue
            var f = figures[type] ?? NotificationFigures(type: type, received: 0, sinceMigration: 0)
            f.received += 1
            f.firstOccurred = min(f.firstOccurred ?? body.eventTime, body.eventTime)
            f.lastOccurred = max(f.lastOccurred ?? body.eventTime, body.eventTime)
            f.firstRecorded = f.firstRecorded ?? event.recordedAt
            f.lastRecorded = event.recordedAt
            if let user = try event.identifiers.all.lazy.compactMap({ try snapshot.user(with: $0) }).first,
                user.status.isDone, let migratedAt = user.migratedAt, body.eventTime >= migratedAt
            {
                f.sinceMigration += 1
            }
            figures[type] = f
            perDay[body.eventTime.date, default: [:]][type, default: 0] += 1
        }
        let order = NotificationReceived.Kind.allCases.map(\.rawValue)
        return (order.compactMap { figures[$0] }, perDay.keys.sorted().map { ($0, perDay[$0]!) })
    }
}
