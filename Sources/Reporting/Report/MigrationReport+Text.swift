import Basics
import Ledger
import Projections

extension MigrationReport {
    /// Pending and unmatched users the terminal report lists before pointing at the query.
    static let terminalRows = 25

    /// A percentage of `part` in `whole`, one decimal ("98.3%"), or "-" for an empty whole.
    static func percent(_ part: Int, of whole: Int) -> String {
        guard whole > 0 else { return "-" }
        let tenths = (part * 1000 + whole / 2) / whole
        return "\(tenths / 10).\(tenths % 10)%"
    }

    /// "YYYY-MM-DD, deadline …, N days left (open)", or a note that none was recorded.
    var windowLine: String {
        guard let window else { return "not recorded (run `handover window --accepted-at DATE`): the deadline figures are empty" }
        let state = window.isOpen(at: asOf) ? "open" : (asOf < window.acceptedAt ? "not yet open" : "closed")
        return "accepted \(window.acceptedAt.date), deadline \(window.deadline.rfc3339), \(counted(window.daysLeft(at: asOf), "day")) left (\(state))"
    }

    /// The headline figures as label → value rows, shared by the terminal and HTML reports.
    var figures: [(label: String, value: String)] {
        var rows: [(String, String)] = [
            ("users known", "\(usersKnown)"),
            ("migrated", "\(migrated) (\(Self.percent(migrated, of: usersKnown)))"),
        ]
        for (path, users) in migratedByPath { rows.append(("  by \(path)", "\(users)")) }
        rows += [
            ("migrated before the deadline", window == nil ? "-" : "\(beforeDeadline)"),
            ("migrated after the deadline", window == nil ? "-" : "\(afterDeadline)"),
            ("pending (not yet migrated)", "\(pending.count)"),
        ]
        for (label, counts) in [("applied to the app's accounts", appliedByOutcome), ("relay addresses set on the accounts", emailAppliedByOutcome)]
        where !counts.isEmpty {
            rows.append((label, "\(counts.first { $0.outcome == ApplyOutcome.applied.rawValue }?.users ?? 0)"))
            for (outcome, users) in counts where outcome != ApplyOutcome.applied.rawValue {
                rows.append(("  " + (outcome == ApplyOutcome.kept.rawValue ? "kept (the user's own address)" : outcome), "\(users)"))
            }
        }
        rows += [
            ("first migration", firstMigration.map { Self.occurredAndRecorded($0.occurred, $0.recorded) } ?? "-"),
            ("last migration", lastMigration.map { Self.occurredAndRecorded($0.occurred, $0.recorded) } ?? "-"),
            ("notifications received", "\(notifications.reduce(0) { $0 + $1.received })"),
            ("users who revoked consent", "\(consentRevoked)"),
            ("accounts deleted", "\(accountsDeleted)"),
            ("users erased", "\(usersErased)"),
            ("unmatched users (notifications)", "\(unmatched.count) (\(unmatchedNotifications))"),
            ("sign-ins rejected", "\(signInsRejected)"),
            ("notifications rejected", "\(notificationsRejected)"),
        ]
        return rows
    }

    static func occurredAndRecorded(_ occurred: Timestamp, _ recorded: Timestamp?) -> String {
        guard let recorded, recorded != occurred else { return occurred.rfc3339 }
        return "\(occurred.rfc3339) (recorded \(recorded.rfc3339))"
    }

    /// The report's tables, each under its declared columns.
    var daysTable: QueryTable { Day.answer.table(days) }
    var notificationsTable: QueryTable { NotificationFigures.answer.table(notifications) }
    /// The pending users, or the first `count` (a screen's or a page's worth, not all held twice).
    func pendingTable(first count: Int = .max) -> QueryTable { Answers.pending.table(pending.prefix(count)) }
    var failuresByClassTable: QueryTable { Answers.failuresByClass.table(failuresByClass) }
    func unmatchedTable(first count: Int = .max) -> QueryTable { Answers.unmatched.table(unmatched.prefix(count)) }

    /// Every table the report shows, for the column reference.
    public static let answers = [Day.answer.description, NotificationFigures.answer.description]

    /// The events the report is made from, for people: "events 1 to N" or "event 1".
    var eventsCovered: String { throughSequence == 1 ? "event 1" : "events 1 to \(throughSequence)" }

    /// What a historical report holds: the events recorded by its time, or none (a time
    /// before the ledger's first event).
    var recordedByThen: String {
        throughSequence == 0 ? "no event had been recorded by then" : "only what had been recorded by then (\(eventsCovered))"
    }

    /// The report for a terminal.
    public var text: String {
        var out = "Migration report: \(identity.role.rawValue) ledger \(identity.ledgerID), team \(identity.teamID)\n"
        out +=
            isHistorical
            ? "As of \(asOf.rfc3339): \(recordedByThen)\n"
            : "Now, \(asOf.rfc3339) (\(eventsCovered))\n"
        out += "Transfer window: \(windowLine)\n\n"
        let width = figures.map(\.label.count).max() ?? 0
        for (label, value) in figures { out += "  " + label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value + "\n" }
        /// A table of the first rows of `total`, pointing at the query for the rest.
        func section(_ title: String, _ table: QueryTable, of total: Int? = nil, more: String = "") {
            out += "\n\(title)\n" + table.render(.table)
            if let total, total > table.rows.count { out += "(\(total - table.rows.count) more: \(more))\n" }
        }
        if let bothHalves {
            section(
                "Both halves, joined with the sender's ledger by transfer_sub (handover reconcile)\n" + bothHalves.checkpointLine, bothHalves.table)
        }
        section("Migrations per day (when they happened, UTC)", daysTable)
        section("Failures by class (users whose last attempt failed)", failuresByClassTable)
        section(
            "Pending users, with days left and the last error", pendingTable(first: Self.terminalRows), of: pending.count,
            more: "handover query pending")
        section("Apple notifications by type (occurred = Apple's event_time)", notificationsTable)
        section(
            "Unmatched users (Apple told us about them; no migration step named them)", unmatchedTable(first: Self.terminalRows), of: unmatched.count,
            more: "handover query unmatched")
        return out
    }

    /// The report as one JSON object for machines.
    public var json: JSONValue {
        func time(_ t: Timestamp?) -> JSONValue { t.map { .string($0.rfc3339) } ?? .null }
        func migration(_ m: (occurred: Timestamp, recorded: Timestamp?)?) -> JSONValue {
            guard let m else { return .null }
            return .object(["occurred_at": time(m.occurred), "recorded_at": time(m.recorded)])
        }
        var windowValue: JSONValue = .null
        if let window {
            windowValue = .object([
                "accepted_at": time(window.acceptedAt), "deadline": time(window.deadline), "window_days": .int(Int64(window.windowDays)),
                "days_left": .int(Int64(window.daysLeft(at: asOf))), "open": .bool(window.isOpen(at: asOf)),
            ])
        }
        var object: [String: JSONValue] = [
            "ledger_id": .string(identity.ledgerID), "team_id": .string(identity.teamID), "role": .string(identity.role.rawValue),
            "as_of": time(asOf), "historical": .bool(isHistorical), "through_sequence": .int(Int64(throughSequence)), "window": windowValue,
            "users_known": .int(Int64(usersKnown)), "migrated": .int(Int64(migrated)),
            "migrated_by_path": .object(Dictionary(uniqueKeysWithValues: migratedByPath.map { ($0.path, JSONValue.int(Int64($0.users))) })),
            "migrated_before_deadline": window == nil ? .null : .int(Int64(beforeDeadline)),
            "migrated_after_deadline": window == nil ? .null : .int(Int64(afterDeadline)),
            "first_migration": migration(firstMigration), "last_migration": migration(lastMigration),
            "migrations_per_day": daysTable.json, "pending": pendingTable().json, "failures_by_class": failuresByClassTable.json,
            "notifications_by_type": notificationsTable.json,
            "consent_revoked": .int(Int64(consentRevoked)), "accounts_deleted": .int(Int64(accountsDeleted)),
            "users_erased": .int(Int64(usersErased)),
            "unmatched_users": unmatchedTable().json, "unmatched_notifications": .int(Int64(unmatchedNotifications)),
            "sign_ins_rejected": .int(Int64(signInsRejected)), "notifications_rejected": .int(Int64(notificationsRejected)),
        ]
        // Present once an apply recorded an outcome: the report of a ledger without one stays as it was.
        for (key, counts) in [("applied_by_outcome", appliedByOutcome), ("email_applied_by_outcome", emailAppliedByOutcome)] where !counts.isEmpty {
            object[key] = .object(Dictionary(uniqueKeysWithValues: counts.map { ($0.outcome, JSONValue.int(Int64($0.users))) }))
        }
        // Only when asked (`--sender`): a report of one ledger reads as it always did.
        if let bothHalves {
            object["both_halves"] = .object([
                "sender": .string(bothHalves.senderOrigin), "checkpoints_held": .int(Int64(bothHalves.checkpointsHeld)),
                "totals": bothHalves.table.json,
            ])
        }
        return .object(object)
    }
}
