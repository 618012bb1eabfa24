import Basics
import ExitStatuses
import Ledger

/// One line of a preflight: what was checked, how it came out, and what it found.
public struct PreflightCheck: Sendable, Equatable {
    /// How a check came out.
    public enum Verdict: String, Sendable {
        case passed = "ok"
        /// Worth a look, not a reason to wait (a key file named for another key ID).
        case warning = "warn"
        /// A problem here: the ledger, the files, the disk, the clock or a setting.
        case failed = "FAIL"
        /// Apple refused: the credentials, or the test call.
        case refused = "REFUSED"
        /// Not checked: what it needs failed first, or it waits for something (the transfer).
        case skipped = "skip"
    }

    public var name: String
    public var verdict: Verdict
    public var detail: String

    public init(_ name: String, _ verdict: Verdict, _ detail: String) {
        self.name = name
        self.verdict = verdict
        self.detail = detail
    }
}

/// What a preflight found, line by line, and the verdict: exit 0 when every check passed, 3
/// when Apple refused, 2 for a problem here.
public struct PreflightReport: Sendable {
    public var checks: [PreflightCheck] = []

    public init() {}

    mutating func add(_ name: String, _ verdict: PreflightCheck.Verdict, _ detail: String) {
        checks.append(PreflightCheck(name, verdict, detail))
    }

    public var exitStatus: ExitStatus {
        if checks.contains(where: { $0.verdict == .refused }) { return .credentialsRefused }
        if checks.contains(where: { $0.verdict == .failed }) { return .usage }
        return .success
    }

    /// The last line: ready, or what stands in the way.
    public var verdict: String {
        switch exitStatus {
        case .success: "ready: every check passed" + (checks.contains { $0.verdict == .skipped } ? " (some were skipped, as said above)" : "")
        case .credentialsRefused: "not ready: Apple refused (exit 3); fix what the REFUSED lines name and run preflight again"
        default: "not ready: fix what the FAIL lines name and run preflight again (exit 2)"
        }
    }

    /// One line per check, `ok    name  detail`, then the verdict.
    public var text: String {
        let width = (checks.map(\.name.count).max() ?? 0) + 2
        let indent = String(repeating: " ", count: 8 + width)
        let lines = checks.map { check in
            let prefix =
                check.verdict.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
                + check.name.padding(toLength: width, withPad: " ", startingAt: 0)
            // A detail of several lines (an input file's problems) shows one per line, each made inert.
            let detail = check.detail.split(separator: "\n").map {
                TerminalText.wrap(InertText.forScreen(String($0)), width: max(40, TerminalText.width - indent.count), continuation: "")
            }.joined(separator: "\n")
            return prefix + detail.split(separator: "\n").joined(separator: "\n" + indent)
        }
        return (lines + [verdict]).joined(separator: "\n")
    }

    /// The report as one JSON object: `checks` (name, verdict, detail), `verdict`, `exit_status`.
    public var json: String {
        var w = JSONWriter()
        w.beginObject()
        w.key("checks")
        w.beginArray()
        for check in checks {
            w.beginObject()
            w.field("detail", check.detail)
            w.field("name", check.name)
            w.field("verdict", check.verdict.rawValue)
            w.endObject()
        }
        w.endArray()
        w.field("exit_status", Int(exitStatus.rawValue))
        w.field("verdict", verdict)
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
