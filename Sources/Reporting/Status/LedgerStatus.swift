import Basics
import ExitStatuses
import Foundation
import Ledger
import LogEngine
import Projections

/// `handover status`: one screen for the 60 days, for the person on call and for cron: the
/// window and the days left, users by state, failures by class, the packages, the last run, the
/// age of the last checkpoint, and what to do next, each step a command that runs as printed
/// (words in capitals are the operator's to fill in). On track, or not: not on track means
/// something to do before the deadline (users a run can still migrate with fewer than
/// `warnDays` days left, a last run that stopped or failed users a retry can help, no package
/// received near the deadline). Users Apple settled (account deleted, consent revoked, their
/// call refused for good) are shown as settled, not as a failure: no run changes them.
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

    /// The handoff packages: issued and acknowledged (team A), received (team B).
    public struct Packages: Sendable {
        public var issued = 0
        public var acknowledged = 0
        public var received = 0
    }

    public var identity: LedgerCreated
    /// The ledger directory as given, for the commands of ``nextSteps``.
    public var directory: String
    public var now: Timestamp
    public var window: TransferWindow?
    /// Users by state (`migrated`, `pending`, `failed`, `unmatched`, ...).
    public var usersByState: [String: Int]
    /// Failed users a retry can help, by the class of their last failure.
    public var failuresByClass: [String: Int]
    /// Users not done whom no run can migrate, by why (``Settlement``).
    public var settledByReason: [String: Int] = [:]
    /// Team B: users by what `apply` last did to their account in the app's database (empty before any apply).
    public var appliedByOutcome: [String: Int] = [:]
    /// Team B: users by what `apply` last did to their account's email column (empty before an
    /// apply that set it).
    public var emailAppliedByOutcome: [String: Int] = [:]
    public var packages = Packages()
    public var lastRun: LastRun?
    /// The last `generate` or `exchange`, as it started: its input and target, for running it again.
    public var lastMigrationRun: RunStarted?
    /// The batch runs not finished (``RunStanding``): running, or stopped without finishing.
    /// A stopped run counts until a later run of the same command and input finishes.
    public var runs: [RunStanding] = []
    /// The last `apply --commit`, as it started: its table and mapping, for the apply commands.
    public var lastApply: ApplyStarted?
    /// The last checkpoint: how many events it covers, and when the newest of them was
    /// recorded (what the signed log itself says; a checkpoint carries no time of its own).
    public var lastCheckpoint: (treeSize: UInt64, coversUntil: Timestamp)?
    /// The witnesses of the ledger's checkpoints, configured or having cosigned.
    public var witnesses: [WitnessStanding] = []
    public var events: UInt64
    public var warnDays: Int

    /// Reads the ledger once: the users in one pass over the projections, the runs, packages
    /// and checkpoint from their indexes.
    public static func read(ledger: Ledger, projection: UserProjection, now: Timestamp = .now(), warnDays: Int = 14) throws -> LedgerStatus {
        let identity = try ledger.identity()
        let checkpoint = try ledger.latestCheckpoint()
        var status = try projection.read(ledger) { snapshot, view in
            var byState: [String: Int] = [:]
            var byClass: [String: Int] = [:]
            var settled: [String: Int] = [:]
            var byOutcome: [String: Int] = [:]
            var emailByOutcome: [String: Int] = [:]
            try snapshot.forEachUser { user in
                byState[user.status.name, default: 0] += 1
                if let settlement = user.settlement {
                    settled[settlement.rawValue, default: 0] += 1
                } else if user.status == .failed {
                    byClass[user.lastErrorClass?.rawValue ?? "unknown", default: 0] += 1
                }
                if let cell = user.applied.recipientSub { byOutcome[cell.outcome.rawValue, default: 0] += 1 }
                if let cell = user.applied.email { emailByOutcome[cell.outcome.rawValue, default: 0] += 1 }
            }
            var status = LedgerStatus(
                identity: identity, directory: ledger.directory, now: now, window: try snapshot.window(), usersByState: byState,
                failuresByClass: byClass, settledByReason: settled, appliedByOutcome: byOutcome,
                lastCheckpoint: try checkpoint.flatMap { checkpoint in
                    try view.eventAsLogged(checkpoint.treeSize).map { (checkpoint.treeSize, $0.recordedAt) }
                }, events: try snapshot.checkpoint(), warnDays: warnDays)
            status.emailAppliedByOutcome = emailByOutcome
            status.packages = Packages(
                issued: try view.sequences(of: .handoffIssued).count, acknowledged: try view.sequences(of: .handoffAcknowledged).count,
                received: try view.sequences(of: .handoffReceived).count)
            status.witnesses = try WitnessStanding.read(directory: ledger.directory, view: view)
            try status.readRuns(view, ledger: ledger.directory)
            return status
        }
        // A run records its end before it lets its lock go: one that ended between this read and
        // the look at its lock seemed stopped, and a read begun after that look sees its end.
        if status.runs.contains(where: { if case .stopped = $0.state { true } else { false } }) {
            try ledger.read { view in try status.readRuns(view, ledger: ledger.directory) }
        }
        return status
    }

    /// The runs, the last run and the last apply, from `view`.
    private mutating func readRuns(_ view: LogView, ledger directory: String) throws {
        lastRun = try Self.lastRun(in: view)
        lastMigrationRun = try Self.lastMigrationRun(in: view)
        let standings = try RunStanding.read(view, ledger: directory)
        runs = standings.filter { if case .finished = $0.state { false } else { true } }
        lastApply = standings.compactMap { if case .apply(let started) = $0.start, started.undoOf == nil { started } else { nil } }.last
    }

    /// The last batch run, from its "run finished".
    private static func lastRun(in view: LogView) throws -> LastRun? {
        guard let sequence = try view.sequences(of: .runFinished).last, let event = try view.event(sequence),
            case .runFinished(let body) = event.body
        else { return nil }
        // An apply's counts are its accounts' cells by column (COLUMN.OUTCOME, the sub's
        // OUTCOME alone) and outcome, each column's adding up to the accounts it took; a
        // migration run's, its users by result.
        let users =
            body.command == "apply"
            ? Dictionary(grouping: body.counts) { $0.key.split(separator: ".").dropLast().first ?? "" }.values.map { $0.reduce(0) { $0 + $1.value } }
                .max()
                ?? 0
            : (body.counts["succeeded"] ?? 0) + (body.counts["failed"] ?? 0)
        return LastRun(
            command: body.command, finishedAt: event.recordedAt, exitStatus: body.exitStatus,
            usersPerSecond: body.durationMilliseconds > 0 ? Double(users) * 1000 / Double(body.durationMilliseconds) : 0,
            stopReason: body.effectiveStopReason, pausedMilliseconds: body.appleUnavailable?.pausedMilliseconds,
            notAttempted: (body.counts["not_attempted"] ?? 0) + (body.counts["abandoned"] ?? 0))
    }

    /// The last "run started" of a `generate` or `exchange` (an apply records runs too).
    private static func lastMigrationRun(in view: LogView) throws -> RunStarted? {
        for sequence in try view.sequences(of: .runStarted).reversed() {
            if let event = try view.event(sequence), case .runStarted(let body) = event.body, ["generate", "exchange"].contains(body.command) {
                return body
            }
        }
        return nil
    }

    /// Users a run can still migrate: pending, received (handed over, not tried yet), or failed
    /// in a way a retry can help. Settled users are not among them.
    public var usersLeft: Int {
        (usersByState["pending"] ?? 0) + (usersByState["received"] ?? 0) + (usersByState["failed"] ?? 0) - settledByReason.values.reduce(0, +)
    }

    /// Failed users a retry can help.
    public var failedRetryable: Int { failuresByClass.values.reduce(0, +) }

    public var daysLeft: Int? { window?.daysLeft(at: now) }

    /// Whether the last run's exit status is history: no user is left that a run can migrate
    /// (a later sign-in or run did the rest, or Apple settled them), and the ledger knows every
    /// user of that run. Team B's ledger records the rows handed over before any call; team A's
    /// learns a user only when it is attempted, so a team A run that stopped before some of its
    /// users still counts.
    public var lastRunIsHistory: Bool {
        guard let lastRun, usersLeft == 0 else { return false }
        return identity.role == .recipient || lastRun.notAttempted == 0
    }

    /// Whether team B waits for team A's first package: no package received and no user known.
    public var awaitsFirstPackage: Bool {
        identity.role == .recipient && packages.received == 0 && usersByState.values.reduce(0, +) == 0
    }

    /// What needs doing before the deadline; empty when the migration is on track.
    public var concerns: [String] {
        var concerns: [String] = []
        if let window, usersLeft > 0 {
            if window.hasClosed(at: now) {
                concerns.append("the window closed on \(window.deadline) with \(counted(usersLeft, "user")) not migrated")
            } else if let days = daysLeft, days < warnDays {
                concerns.append("\(counted(usersLeft, "user")) not migrated with \(counted(days, "day")) left (under \(warnDays))")
            }
        }
        if awaitsFirstPackage, let window, let days = daysLeft, !window.hasClosed(at: now), days < warnDays {
            concerns.append("no package received from team A with \(counted(days, "day")) left (under \(warnDays))")
        }
        for run in runs {
            switch run.state {
            case .stopped:
                concerns.append("the \(run.command.rawValue) run\(run.subject) started \(run.startedAt) stopped without finishing")
            case .unknown(let host):
                concerns.append(
                    "the \(run.command.rawValue) run\(run.subject) started \(run.startedAt) on \(host) has not finished, and this host cannot see whether it still runs"
                )
            case .running, .finished: break
            }
        }
        if let lastRun, lastRun.exitStatus != 0, !lastRunIsHistory, lastRun.stopReason != nil || failedRetryable > 0 || lastRun.notAttempted > 0 {
            concerns.append(
                "the last run (\(lastRun.command), \(lastRun.finishedAt)) ended with exit \(lastRun.exitStatus)"
                    + (lastRun.stopReason.map { ", stopped: \($0.rawValue)" } ?? ""))
        }
        return concerns
    }

    /// 0 on track, 1 not (for cron and monitoring).
    public var exitStatus: ExitStatus { concerns.isEmpty ? .success : .failed }

    /// The commands this status prints.
    private var commands: RunResumption { RunResumption(directory: directory, role: identity.role) }

    /// `handover WORDS --ledger DIR`, the directory quoted for a shell when it needs to be.
    private func command(_ words: String, _ rest: String = "") -> String { commands.command(words, rest) }

    /// The last migration run again, as it was given, with `extra` options.
    private func runAgain(_ extra: String = "") -> String { commands.migration(lastMigrationRun, extra) }

    /// What to do next, in order, each with the command that does it.
    public var nextSteps: [String] {
        var steps: [String] = []
        if awaitsFirstPackage {
            steps.append(
                "no package from team A yet: the day it arrives, receive it with their verifier key: \(command("handoff receive PACKAGE", "--sender-key SENDER.PUB"))"
            )
        } else if identity.role == .sender, lastMigrationRun == nil, usersByState.isEmpty {
            steps.append("nothing generated yet: \(command("preflight", "--users USERS.CSV")), then \(runAgain())")
        }
        for run in runs where run.isUnfinished {
            if case .unknown(let host) = run.state {
                // Resumed here while it still runs there, two processes would do its work.
                steps.append(
                    "on \(host), see whether the \(run.command.rawValue) run\(run.subject) still runs (handover status there); only if it does not, resume it: \(commands.resuming(run))"
                )
            } else {
                steps.append(
                    "resume the \(run.command.rawValue) run\(run.subject) that did not finish (it takes up where it stopped): \(commands.resuming(run))"
                )
            }
        }
        if window == nil {
            steps.append(
                "record the transfer date once it is accepted: \(command("window", "--accepted-at YYYY-MM-DD")) (the deadline is then in view)")
        }
        switch lastRunIsHistory ? nil : lastRun?.stopReason {
        case .credentials?:
            steps.append("Apple refused the credentials: run \(command("preflight")), fix what it names, then \(runAgain())")
        case .breaker?:
            steps.append(
                "nearly every call was refused the same way: see \(command("query failures", "--by-class")), fix the run's setting, then \(runAgain("--retry-failed"))"
            )
        case .outage?, .retryAfter?: steps.append("Apple was unavailable: \(runAgain()) (nobody was lost)")
        case nil: break
        }
        let attention = [appliedByOutcome, emailAppliedByOutcome].reduce(0) { $0 + ($1["collision"] ?? 0) + ($1["changed-meanwhile"] ?? 0) }
        if attention > 0 {
            let plan = lastApply.map { commands.apply($0, commit: false) } ?? commands.firstApply
            steps.append(
                "\(counted(attention, "value")) of the app's accounts \(attention == 1 ? "was" : "were") not written (a collision, or changed meanwhile): \(plan) lists them; merge or fix them, then run it again with --commit"
            )
        } else if identity.role == .recipient, appliedByOutcome.isEmpty, (usersByState["migrated"] ?? 0) > 0 {
            steps.append(
                "set the migrated users' new sub on their accounts: \(commands.firstApply) (a plan first, then --commit)"
            )
        }
        if failedRetryable > 0 {
            steps.append(
                "\(counted(failedRetryable, "failed user")) a retry can help: see \(command("query failures", "--by-class")); retry: \(runAgain("--retry-failed"))"
            )
        }
        let waiting = (usersByState["pending"] ?? 0) + (usersByState["received"] ?? 0) - settledWaiting
        if waiting > 0, !(window?.hasClosed(at: now) ?? false) {
            steps.append("\(counted(waiting, "user")) not tried yet: \(runAgain()) (it resumes)")
        }
        if let checkpoint = lastCheckpoint, checkpoint.treeSize < events {
            steps.append("sign a checkpoint over the \(counted(events - checkpoint.treeSize, "event")) since the last: \(command("checkpoint"))")
        } else if lastCheckpoint == nil, events > 0 {
            steps.append("sign a first checkpoint: \(command("checkpoint"))")
        }
        if let checkpoint = lastCheckpoint, witnesses.contains(where: { $0.url != nil && ($0.cosignedSize ?? 0) < checkpoint.treeSize }) {
            steps.append("submit the latest checkpoint to the witnesses: \(command("witness"))")
        }
        return steps.isEmpty ? ["nothing: every user is done"] : steps
    }

    /// Settled users among the pending and received (the rest of the settled failed).
    private var settledWaiting: Int {
        settledByReason.values.reduce(0, +) - ((usersByState["failed"] ?? 0) - failedRetryable)
    }

    /// The screen.
    public var text: String {
        var lines = [
            "\(identity.role == .sender ? "team A (sender)" : "team B (recipient)") \(identity.teamID), client IDs \(identity.clientIDs.joined(separator: ", "))"
        ]
        if let window {
            let left = window.hasClosed(at: now) ? "closed" : "\(counted(window.daysLeft(at: now), "day")) left"
            lines.append("window:       accepted \(window.acceptedAt), closes \(window.deadline): \(left)")
        } else {
            lines.append("window:       no transfer date recorded")
        }
        let states = usersByState.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        lines.append("users:        \(states.isEmpty ? "none yet" : states)")
        if !failuresByClass.isEmpty {
            lines.append("failures:     " + failuresByClass.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if !settledByReason.isEmpty {
            lines.append(
                "settled:      " + settledByReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                    + " (no run changes them; one who revoked consent can still migrate by signing in)")
        }
        switch identity.role {
        case .sender:
            lines.append("packages:     \(packages.issued) issued, \(packages.acknowledged) acknowledged by team B")
        case .recipient:
            lines.append("packages:     " + (packages.received == 0 ? "none received" : "\(packages.received) received"))
        }
        for (label, counts, what) in [
            ("applied:      ", appliedByOutcome, "the app's accounts"), ("emails:       ", emailAppliedByOutcome, "relay addresses"),
        ]
        where !counts.isEmpty {
            lines.append(label + counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + " (\(what))")
        }
        if let run = lastRun {
            var line = "last run:     \(run.command), finished \(run.finishedAt), exit \(run.exitStatus), \(Int(run.usersPerSecond)) users/s"
            if let reason = run.stopReason { line += ", stopped (\(reason.rawValue))" }
            if let paused = run.pausedMilliseconds, paused > 0 { line += ", waited \(Duration.milliseconds(paused).spoken) for Apple" }
            lines.append(line)
        } else {
            lines.append("last run:     none yet")
        }
        for (i, run) in runs.enumerated() { lines.append((i == 0 ? "runs:         " : "              ") + run.spoken(at: now)) }
        if let checkpoint = lastCheckpoint {
            let age = Duration.microseconds(max(0, now.microseconds - checkpoint.coversUntil.microseconds))
            lines.append("checkpoint:   \(checkpoint.treeSize) of \(events) events, the newest recorded \(age.spoken) ago")
        } else {
            lines.append("checkpoint:   none signed")
        }
        if !witnesses.isEmpty { lines.append("witnesses:    " + witnesses.map { $0.spoken(at: now) }.joined(separator: "; ")) }
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
        w.field("email_applied_by_outcome", counts: emailAppliedByOutcome)
        w.field("concerns", strings: concerns)
        w.key("days_left")
        daysLeft.map { w.int($0) } ?? w.raw(Array("null".utf8))
        w.field("events", events)
        w.field("exit_status", Int(exitStatus.rawValue))
        w.field("failures_by_class", counts: failuresByClass)
        if let checkpoint = lastCheckpoint {
            w.key("last_checkpoint")
            w.beginObject()
            w.field("covers_until", checkpoint.coversUntil)
            w.field("tree_size", checkpoint.treeSize)
            w.endObject()
        }
        if let run = lastRun {
            w.key("last_run")
            w.beginObject()
            w.field("command", run.command)
            w.field("exit_status", run.exitStatus)
            w.field("finished_at", run.finishedAt)
            w.field("stop_reason", run.stopReason?.rawValue)
            w.field("users_per_second", Int(run.usersPerSecond))
            w.endObject()
        }
        w.field("next", strings: nextSteps)
        w.key("packages")
        w.beginObject()
        switch identity.role {
        case .sender:
            w.field("acknowledged", packages.acknowledged)
            w.field("issued", packages.issued)
        case .recipient:
            w.field("received", packages.received)
        }
        w.endObject()
        w.field("role", identity.role.rawValue)
        w.key("runs")
        w.beginArray()
        for run in runs {
            w.beginObject()
            if let chunks = run.chunks {
                w.field("chunks", chunks.of)
                w.field("chunks_recorded", chunks.recorded)
            }
            w.field("command", run.command.rawValue)
            w.field("done", run.done)
            w.field("host", run.host)
            w.field("id", run.id)
            if case .running(let holder) = run.state {
                w.field("per_second", Int(run.rate(at: now).rounded()))
                w.field("pid", holder?.pid)
            }
            w.field("resume", run.isUnfinished ? commands.resuming(run) : nil)
            w.field("started_at", run.startedAt)
            w.field("state", run.state.name)
            w.field("total", run.total)
            w.endObject()
        }
        w.endArray()
        w.field("settled_by_reason", counts: settledByReason)
        w.field("team_id", identity.teamID)
        w.field("users_by_state", counts: usersByState)
        w.field("users_left", usersLeft)
        if let window {
            w.key("window")
            w.beginObject()
            w.field("accepted_at", window.acceptedAt)
            w.field("closes_at", window.deadline)
            w.endObject()
        }
        if !witnesses.isEmpty {
            w.key("witnesses")
            w.beginArray()
            for witness in witnesses {
                w.beginObject()
                w.field("cosigned_at", witness.cosignedAt)
                w.field("cosigned_size", witness.cosignedSize)
                w.field("name", witness.name)
                w.field("url", witness.url)
                w.endObject()
            }
            w.endArray()
        }
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
