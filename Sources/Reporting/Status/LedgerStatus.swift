import ExitStatuses
import Foundation
import Ledger
import Projections

/// `handover status`: one screen for the 60 days, for the person on call and for cron: the
/// window and the days left, users by state, failures by class, the last run, the age of the
/// last checkpoint, and what to do next. On track, or not: users pending with fewer than
/// `warnDays` days left, or a last run that did not succeed.
public struct LedgerStatus: Sendable {
    /// The last batch run, from its "run finished".
    public struct LastRun: Sendable {
        public var command: String
        public var finishedAt: Timestamp
        public var exitStatus: Int
        public var usersPerSecond: Double
        public var stopReason: RunFinished.StopReason?
        public var pausedMilliseconds: Int?
        /// Users of the run it neither attempted nor finished (stopped or interrupted before
        /// them): team A's ledger may not know them yet.
        public var notAttempted = 0
    }

    public var identity: LedgerCreated
    public var now: Timestamp
    public var window: TransferWindow?
    /// Users by state (`migrated`, `pending`, `failed`, `unmatched`, ...).
    public var usersByState: [String: Int]
    /// Failed users by the class of their last failure.
    public var failuresByClass: [String: Int]
    /// Team B: users by what `apply` last did to their account in the app's database (empty before any apply).
    public var appliedByOutcome: [String: Int] = [:]
    public var lastRun: LastRun?
    /// When the last checkpoint was signed, and over how many events.
    public var lastCheckpoint: (time: Timestamp, treeSize: UInt64)?
    public var events: UInt64
    public var warnDays: Int

    /// Reads the ledger once: the users in one pass over the projections, the last run and
    /// checkpoint from their indexes.
    public static func read(ledger: Ledger, projection: UserProjection, now: Timestamp = .now(), warnDays: Int = 14) throws -> LedgerStatus {
        let identity = try ledger.identity()
        let checkpoint = try ledger.latestCheckpoint()
        return try projection.read(ledger) { snapshot, view in
            var byState: [String: Int] = [:]
            var byClass: [String: Int] = [:]
            var byOutcome: [String: Int] = [:]
            try snapshot.forEachUser { user in
                byState[user.status.name, default: 0] += 1
                if user.status == .failed { byClass[user.lastErrorClass?.rawValue ?? "unknown", default: 0] += 1 }
                if let outcome = user.applyOutcome { byOutcome[outcome.rawValue, default: 0] += 1 }
            }
            var lastRun: LastRun?
            if let sequence = try view.sequences(of: .runFinished).last, let event = try view.event(sequence),
                case .runFinished(let body) = event.body
            {
                // An apply's counts are its accounts by outcome; a migration run's, its users by result.
                let users = body.command == "apply" ? body.counts.values.reduce(0, +) : (body.counts["succeeded"] ?? 0) + (body.counts["failed"] ?? 0)
                lastRun = LastRun(
                    command: body.command, finishedAt: event.recordedAt, exitStatus: body.exitStatus,
                    usersPerSecond: body.durationMilliseconds > 0 ? Double(users) * 1000 / Double(body.durationMilliseconds) : 0,
                    stopReason: body.effectiveStopReason, pausedMilliseconds: body.appleUnavailable?.pausedMilliseconds,
                    notAttempted: (body.counts["not_attempted"] ?? 0) + (body.counts["abandoned"] ?? 0))
            }
            return LedgerStatus(
                identity: identity, now: now, window: try snapshot.window(), usersByState: byState, failuresByClass: byClass,
                appliedByOutcome: byOutcome, lastRun: lastRun, lastCheckpoint: checkpoint.map { ($0.time, $0.treeSize) },
                events: try snapshot.checkpoint(),
                warnDays: warnDays)
        }
    }

    /// Users not migrated yet: pending, received (handed over, not tried yet), or failed and
    /// waiting for `--retry-failed`.
    public var usersLeft: Int { (usersByState["pending"] ?? 0) + (usersByState["received"] ?? 0) + (usersByState["failed"] ?? 0) }

    public var daysLeft: Int? { window?.daysLeft(at: now) }

    /// Whether the last run's exit status is history: no user is left to do (a later sign-in or
    /// run did the rest), and the ledger knows every user of that run. Team B's ledger records
    /// the rows handed over before any call; team A's learns a user only when it is attempted,
    /// so a team A run that stopped before some of its users still counts.
    public var lastRunIsHistory: Bool {
        guard let lastRun, usersLeft == 0 else { return false }
        return identity.role == .recipient || lastRun.notAttempted == 0
    }

    /// Why the migration is not on track; empty when it is.
    public var concerns: [String] {
        var concerns: [String] = []
        if let window, usersLeft > 0 {
            if now >= window.deadline {
                concerns.append("the window closed on \(window.deadline) with \(counted(usersLeft, "user")) not migrated")
            } else if let days = daysLeft, days < warnDays {
                concerns.append("\(counted(usersLeft, "user")) not migrated with \(counted(days, "day")) left (under \(warnDays))")
            }
        }
        if let lastRun, lastRun.exitStatus != 0, !lastRunIsHistory {
            concerns.append(
                "the last run (\(lastRun.command), \(lastRun.finishedAt)) ended with exit \(lastRun.exitStatus)"
                    + (lastRun.stopReason.map { ", stopped: \($0.rawValue)" } ?? ""))
        }
        return concerns
    }

    /// 0 on track, 1 not (for cron and monitoring).
    public var exitStatus: ExitStatus { concerns.isEmpty ? .success : .failed }

    /// What to do next, in order.
    public var nextSteps: [String] {
        var steps: [String] = []
        let run = identity.role == .sender ? "handover generate" : "handover exchange"
        if window == nil, identity.role == .recipient {
            steps.append("record the transfer date: handover window --accepted-at DATE (the deadline is then in view)")
        }
        switch lastRunIsHistory ? nil : lastRun?.stopReason {
        case .credentials?: steps.append("Apple refused the credentials: run handover preflight, fix what it names, then \(run) again")
        case .breaker?:
            steps.append(
                "nearly every call was refused the same way: see handover query failures --by-class, fix the run's setting, then \(run) --retry-failed"
            )
        case .outage?, .retryAfter?: steps.append("Apple was unavailable: run \(run) again (nobody was lost)")
        case nil: break
        }
        let attention = (appliedByOutcome["collision"] ?? 0) + (appliedByOutcome["changed-meanwhile"] ?? 0)
        if attention > 0 {
            steps.append(
                "\(counted(attention, "account")) in the app's database \(attention == 1 ? "was" : "were") not written (a collision, or changed meanwhile): handover apply with the same options lists them; merge or fix them, then apply --commit again"
            )
        } else if identity.role == .recipient, appliedByOutcome.isEmpty, (usersByState["migrated"] ?? 0) > 0 {
            steps.append("set the migrated users' new sub on their accounts: handover apply --to DATABASE --table ... (a plan first, then --commit)")
        }
        if (usersByState["failed"] ?? 0) > 0 {
            steps.append("see why users failed: handover query failures --by-class; retry them: \(run) --retry-failed")
        }
        let waiting = (usersByState["pending"] ?? 0) + (usersByState["received"] ?? 0)
        if waiting > 0, window.map({ now < $0.deadline }) ?? true { steps.append("\(counted(waiting, "user")) pending: run \(run) (it resumes)") }
        if let checkpoint = lastCheckpoint, checkpoint.treeSize < events {
            steps.append("sign a checkpoint over the \(counted(events - checkpoint.treeSize, "event")) since the last: handover checkpoint")
        } else if lastCheckpoint == nil, events > 0 {
            steps.append("sign a first checkpoint: handover checkpoint")
        }
        return steps.isEmpty ? ["nothing: every user is done"] : steps
    }

    /// The screen.
    public var text: String {
        var lines = [
            "\(identity.role == .sender ? "team A (sender)" : "team B (recipient)") \(identity.teamID), client IDs \(identity.clientIDs.joined(separator: ", "))"
        ]
        if let window {
            let left = now >= window.deadline ? "closed" : "\(counted(window.daysLeft(at: now), "day")) left"
            lines.append("window:       accepted \(window.acceptedAt), closes \(window.deadline): \(left)")
        } else {
            lines.append("window:       no transfer date recorded")
        }
        let states = usersByState.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        lines.append("users:        \(states.isEmpty ? "none yet" : states)")
        if !failuresByClass.isEmpty {
            lines.append("failures:     " + failuresByClass.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if !appliedByOutcome.isEmpty {
            lines.append(
                "applied:      " + appliedByOutcome.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                    + " (the app's accounts)")
        }
        if let run = lastRun {
            var line = "last run:     \(run.command), finished \(run.finishedAt), exit \(run.exitStatus), \(Int(run.usersPerSecond)) users/s"
            if let reason = run.stopReason { line += ", stopped (\(reason.rawValue))" }
            if let paused = run.pausedMilliseconds, paused > 0 { line += ", waited \(Duration.milliseconds(paused).spoken) for Apple" }
            lines.append(line)
        } else {
            lines.append("last run:     none yet")
        }
        if let checkpoint = lastCheckpoint {
            let age = Duration.microseconds(max(0, now.microseconds - checkpoint.time.microseconds))
            lines.append("checkpoint:   \(checkpoint.treeSize) of \(events) events, signed \(age.spoken) ago")
        } else {
            lines.append("checkpoint:   none signed")
        }
        lines.append(concerns.isEmpty ? "on track" : "NOT ON TRACK: " + concerns.joined(separator: "; "))
        lines.append("next:")
        lines += nextSteps.map { "  - " + $0 }
        return lines.map { InertText.forScreen($0) }.joined(separator: "\n")
    }

    /// The same as one JSON object, keys sorted.
    public var json: String {
        var w = JSONWriter()
        w.beginObject()
        w.field("applied_by_outcome", counts: appliedByOutcome)
        w.key("concerns")
        w.beginArray()
        for concern in concerns { w.string(concern) }
        w.endArray()
        w.key("days_left")
        daysLeft.map { w.int($0) } ?? w.raw(Array("null".utf8))
        w.key("events")
        w.int(events)
        w.key("exit_status")
        w.int(Int(exitStatus.rawValue))
        w.field("failures_by_class", counts: failuresByClass)
        if let checkpoint = lastCheckpoint {
            w.key("last_checkpoint")
            w.beginObject()
            w.key("signed_at")
            w.timestamp(checkpoint.time)
            w.key("tree_size")
            w.int(checkpoint.treeSize)
            w.endObject()
        }
        if let run = lastRun {
            w.key("last_run")
            w.beginObject()
            w.key("command")
            w.string(run.command)
            w.key("exit_status")
            w.int(run.exitStatus)
            w.key("finished_at")
            w.timestamp(run.finishedAt)
            w.field("stop_reason", run.stopReason?.rawValue)
            w.key("users_per_second")
            w.int(Int(run.usersPerSecond))
            w.endObject()
        }
        w.key("next")
        w.beginArray()
        for step in nextSteps { w.string(step) }
        w.endArray()
        w.key("role")
        w.string(identity.role.rawValue)
        w.key("team_id")
        w.string(identity.teamID)
        w.field("users_by_state", counts: usersByState)
        w.key("users_left")
        w.int(usersLeft)
        if let window {
            w.key("window")
            w.beginObject()
            w.key("accepted_at")
            w.timestamp(window.acceptedAt)
            w.key("closes_at")
            w.timestamp(window.deadline)
            w.endObject()
        }
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
