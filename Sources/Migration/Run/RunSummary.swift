import Basics
import ExitStatuses
import Foundation
import Ledger

/// What a run did, by outcome, and its exit status.
public struct RunSummary: Sendable {
    public var command: String
    public var runID: String?
    /// Users in the input file (after dropping duplicates).
    public var users: Int
    /// Migrated by this run.
    public var succeeded = 0
    /// Failed in this run (recorded).
    public var failed = 0
    /// Already done before this run, skipped.
    public var alreadyDone = 0
    /// Done without a call: team B's users who signed in with their `transfer_sub`, skipped.
    public var doneBySignIn = 0
    /// Failed in an earlier run and not retried (no `--retry-failed`).
    public var skippedFailed = 0
    /// Not attempted because the run stopped.
    public var notAttempted = 0
    /// Transient failures retried.
    public var retries = 0
    /// Access tokens obtained.
    public var tokensIssued = 0
    /// Failures of this run, by class.
    public var failuresByClass: [String: Int] = [:]
    /// What stopped the run early, if anything did.
    var stop: RunStop?
    /// The failure that stopped the run early, if one did.
    public var stoppedBy: CallFailure? { stop?.failure }
    /// Why it stopped the run: refused credentials, the breaker, an outage or a `Retry-After`
    /// beyond the run's patience.
    public var stopReason: RunFinished.StopReason? { stop?.reason }
    /// How long the run waited for Apple, when calls failed transiently.
    public var appleUnavailable: RunFinished.AppleUnavailable?
    /// The signal that interrupted the run, if one did.
    public var interrupted: RunInterruption.Signal?
    /// Calls cut off when an interruption's grace period ended: nothing recorded, outcome at Apple unknown.
    public var abandoned = 0
    public var durationSeconds: Double = 0
    /// Rows written to the output file.
    public var outputRows = 0
    public var outputPath: String?
    public var dryRun = false
    /// An exchange's input: a signed package or a bare CSV.
    public var handoff: HandoffInput?
    /// Where the receipt for the sender was written.
    public var receiptPath: String?

    /// Users done, in this run or before.
    public var done: Int { succeeded + alreadyDone + doneBySignIn }

    /// Success: every user is done; failed: some are not (Apple unavailable for longer than the
    /// run waits counts here); credentials refused: Apple refused the run as a whole (the
    /// credentials, or nearly every call the same way); interrupted or terminated: SIGINT or
    /// SIGTERM. A dry run calls nobody and succeeds; what a real run would exit with is
    /// ``realRunExitStatus``.
    public var exitStatus: ExitStatus {
        if let stop { return stop.exitStatus }
        if let interrupted { return interrupted.exitStatus }
        return done == users || dryRun ? .success : .failed
    }

    /// A dry run's forecast: the exit status of the real run if every call it makes succeeds
    /// (the users failed earlier and not retried stay not done).
    public var realRunExitStatus: ExitStatus {
        guard dryRun else { return exitStatus }
        return done + notAttempted == users ? .success : .failed
    }

    /// The counts recorded in "run finished".
    public var counts: [String: Int] {
        let optional = [
            "already_done": alreadyDone, "done_by_sign_in": doneBySignIn, "skipped_failed": skippedFailed, "not_attempted": notAttempted,
            "retries": retries, "abandoned": abandoned,
        ]
        return optional.filter { $0.value > 0 }.merging(["succeeded": succeeded, "failed": failed]) { $1 }
    }

    /// The summary for people.
    public var text: String {
        var lines: [String] = []
        // Team A's users are given transfer identifiers (status names them "transfer-id-generated"),
        // team B's are migrated.
        let outcome =
            dryRun
            ? "would call Apple for \(notAttempted)"
            : command == "generate"
                ? "\(counted(succeeded, "transfer identifier")) generated in this run"
                : "\(succeeded) migrated in this run"
        lines.append("\(command)\(dryRun ? " (dry run)" : ""): \(counted(users, "user")) in the input; \(outcome)")
        if let handoff { lines.append("  " + handoff.line) }
        if let receiptPath {
            lines.append(
                "  receipt for the sending team written to \(receiptPath); they confirm it with "
                    + "`handover handoff confirm \(ShellWord.quoted(receiptPath)) --ledger TEAM_A_LEDGER --recipient-key RECIPIENT.PUB`")
        }
        if alreadyDone > 0 { lines.append("  already done before: \(alreadyDone)") }
        if doneBySignIn > 0 { lines.append("  done by signing in with their transfer_sub (no call needed): \(doneBySignIn)") }
        if failed > 0 {
            let classes = failuresByClass.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            lines.append("  failed: \(failed) (\(classes))")
        }
        if skippedFailed > 0 { lines.append("  failed in an earlier run, not retried: \(skippedFailed) (pass --retry-failed to retry them)") }
        if notAttempted > 0, !dryRun { lines.append("  not attempted: \(notAttempted)") }
        if retries > 0 { lines.append("  transient errors retried: \(retries)") }
        if tokensIssued > 0 { lines.append("  access tokens obtained: \(tokensIssued)") }
        if let appleUnavailable, appleUnavailable.callsRefused > 0 {
            let paused = Duration.milliseconds(appleUnavailable.pausedMilliseconds).spoken
            lines.append(
                "  Apple unavailable: \(counted(appleUnavailable.pauses, "pause")), \(paused) waited; \(counted(appleUnavailable.callsRefused, "call")) refused or unanswered, retried or held"
            )
        }
        if let stoppedBy { lines.append("  STOPPED: \(InertText.forScreen(stoppedBy.message))") }
        if let interrupted {
            lines.append("  INTERRUPTED by \(interrupted.rawValue): no user taken after it; run the same command again to do the rest")
        }
        if abandoned > 0 {
            lines.append(
                "  abandoned in flight after the grace period: \(abandoned) (nothing recorded; their outcome at Apple is unknown, and the next run calls again)"
            )
        }
        if let outputPath { lines.append("  wrote \(counted(outputRows, "row")) to \(outputPath)") }
        if succeeded + failed > 0 {
            lines.append(String(format: "  %.1f s, %.0f users/s", durationSeconds, Double(succeeded + failed) / max(durationSeconds, 0.001)))
        }
        if dryRun {
            let left = users - done - notAttempted
            let meaning =
                left == 0
                ? "every user would be done" : "\(counted(left, "user")) would not be done (failed earlier, not retried without --retry-failed)"
            lines.append("  a real run, if every call succeeds, ends with exit status \(realRunExitStatus.rawValue): " + meaning)
            return lines.map { TerminalText.wrap($0) }.joined(separator: "\n")
        }
        let notDone = users - done == 1 ? "1 user is not done" : "\(users - done) users are not done"
        let meaning =
            switch exitStatus {
            case .success: "every user is done"
            case .credentialsRefused: stopReason == .breaker ? "nearly every call refused the same way" : "credentials refused"
            case .interrupted, .terminated: "interrupted; " + notDone
            default: notDone
            }
        lines.append("  exit status \(exitStatus.rawValue): " + meaning)
        return lines.map { TerminalText.wrap($0) }.joined(separator: "\n")
    }

    /// The summary as one JSON object (``Document``), keys sorted.
    public var json: String {
        // Encoding fails only on a non-finite number; the duration is rounded from a finite one.
        (try? JSONEncoder.sortedKeys().encode(Document(self))).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The JSON form of a summary: its counters, the exit status, and what is known only
    /// sometimes (a dry run's forecast, the interruption, the run ID, the output, what stopped it).
    struct Document: Encodable {
        struct Stop: Encodable {
            var `class`: String
            var reason: String
            var message: String
        }
        struct Unavailable: Encodable {
            var pauses, pausedMilliseconds, callsRefused: Int
            enum CodingKeys: String, CodingKey {
                case pauses, pausedMilliseconds = "paused_ms", callsRefused = "calls_refused"
            }
        }

        var command: String
        var users, succeeded, failed, alreadyDone, skippedFailed, notAttempted, retries, tokensIssued: Int
        var failuresByClass: [String: Int]
        var durationSeconds: Double
        var outputRows, exitStatus, abandoned, doneBySignIn: Int
        var dryRun: Bool
        var realRunExitStatus: Int?
        var interrupted: String?
        var runID: String?
        var output: String?
        var stoppedBy: Stop?
        var appleUnavailable: Unavailable?
        var handoff: String?
        var handoffManifestSHA256: String?
        var receipt: String?

        enum CodingKeys: String, CodingKey {
            case command, users, succeeded, failed, retries, abandoned, interrupted, output, handoff, receipt
            case handoffManifestSHA256 = "handoff_manifest_sha256"
            case alreadyDone = "already_done", skippedFailed = "skipped_failed", notAttempted = "not_attempted", tokensIssued = "tokens_issued"
            case failuresByClass = "failures_by_class", durationSeconds = "duration_seconds", outputRows = "output_rows", exitStatus = "exit_status"
            case doneBySignIn = "done_by_sign_in", dryRun = "dry_run", realRunExitStatus = "real_run_exit_status", runID = "run_id", stoppedBy =
                "stopped_by"
            case appleUnavailable = "apple_unavailable"
        }

        init(_ s: RunSummary) {
            command = s.command
            users = s.users
            succeeded = s.succeeded
            failed = s.failed
            alreadyDone = s.alreadyDone
            skippedFailed = s.skippedFailed
            notAttempted = s.notAttempted
            retries = s.retries
            tokensIssued = s.tokensIssued
            failuresByClass = s.failuresByClass
            durationSeconds = (s.durationSeconds * 1000).rounded() / 1000
            outputRows = s.outputRows
            exitStatus = Int(s.exitStatus.rawValue)
            abandoned = s.abandoned
            doneBySignIn = s.doneBySignIn
            dryRun = s.dryRun
            realRunExitStatus = s.dryRun ? Int(s.realRunExitStatus.rawValue) : nil
            interrupted = s.interrupted?.rawValue
            runID = s.runID
            output = s.outputPath
            stoppedBy = s.stop.map { Stop(class: $0.failure.kind.rawValue, reason: $0.reason.rawValue, message: $0.failure.message) }
            appleUnavailable = s.appleUnavailable.map {
                Unavailable(pauses: $0.pauses, pausedMilliseconds: $0.pausedMilliseconds, callsRefused: $0.callsRefused)
            }
            handoff = s.handoff?.recorded
            handoffManifestSHA256 = s.handoff?.manifestSHA256
            receipt = s.receiptPath
        }
    }
}
