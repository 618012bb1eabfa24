import AppleID
import Basics
import ExitStatuses
import Foundation
import Ledger

/// A run's progress in Prometheus text format, in a file that node_exporter's textfile
/// collector (or anything that reads `*.prom`) serves: written every few seconds while the run
/// goes and once at its end, each time whole (written beside, then renamed over the last), so a
/// scrape never reads half of one.
struct RunMetricsFile: Sendable {
    let path: String
    let command: String

    /// The text for the counts now; `exitStatus` once the run has ended.
    func text(_ counts: RunProgress.Counts, total: Int, apple: ApplePace.Status, exitStatus: ExitStatus?, now: Date = Date()) -> String {
        let label = "command=\"\(command)\""
        var lines: [String] = []
        func gauge(_ name: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) gauge")
            lines += samples.map { "\(name){\($0.labels)} \($0.value)" }
        }
        let left = max(0, total - counts.succeeded - counts.failed)
        gauge(
            "handover_run_users", "Users of the running (or last) run, by outcome so far: succeeded, failed, left.",
            [
                ("\(label),outcome=\"succeeded\"", "\(counts.succeeded)"), ("\(label),outcome=\"failed\"", "\(counts.failed)"),
                ("\(label),outcome=\"left\"", "\(left)"),
            ])
        gauge("handover_run_retries", "Transient failures retried by the run so far.", [(label, "\(counts.retries)")])
        let since = apple.unavailableSince.map { ContinuousClock.now - $0 }
        gauge(
            "handover_run_apple_unavailable_seconds", "How long Apple has been unavailable to the run (0 while it answers).",
            [(label, String(format: "%.3f", since?.inSeconds ?? 0))])
        gauge("handover_run_finished", "1 once the run has ended, 0 while it goes.", [(label, exitStatus == nil ? "0" : "1")])
        if let exitStatus {
            gauge("handover_run_exit_status", "The exit status the run ended with.", [(label, "\(exitStatus.rawValue)")])
        }
        gauge(
            "handover_run_updated_timestamp_seconds", "When this file was written, seconds since 1970.",
            [(label, String(format: "%.3f", now.timeIntervalSince1970))])
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes `text` whole, replacing the last (``AtomicFile``).
    func write(_ text: String) throws {
        try AtomicFile.write(Array(text.utf8), to: path, mode: nil)
    }
}
