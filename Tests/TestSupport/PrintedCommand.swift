import Basics
import Foundation
import Ledger
import Testing

/// `handover status` as a person and as cron read it: the screen, the exit status and the JSON.
public struct StatusReading {
    public let status: Int32
    public let text: String
    public let json: [String: Any]

    /// Runs `handover status` on `ledger`, as text and as JSON.
    public init(_ ledger: String) throws {
        let screen = try handover("status", "--ledger", ledger)
        let json = try handover("status", "--ledger", ledger, "--format", "json")
        status = screen.status
        text = screen.out + screen.err
        self.json = (try? JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any]) ?? [:]
    }

    /// The runs not finished, as the JSON lists them.
    public var runs: [[String: Any]] { json["runs"] as? [[String: Any]] ?? [] }
    public var concerns: [String] { json["concerns"] as? [String] ?? [] }
    /// The `next:` lines of the screen.
    public var next: [String] { json["next"] as? [String] ?? [] }

    /// What `status` must say of a run held part way, then of the same run killed: running (no
    /// concern, exit `exitWhileRunning`), then stopped (a concern, exit 1, the command that
    /// resumes it); returns that command.
    public static func heldThenKilled(
        _ process: RunningProduct, ledger: String, command: String, done: Int, total: Int, exitWhileRunning: Int32 = 0
    ) throws -> String {
        let running = try StatusReading(ledger)
        let run = try #require(running.runs.first, "status lists the run: \(running.text)")
        #expect(running.runs.count == 1)
        #expect(run["command"] as? String == command && run["state"] as? String == "running", "\(run)")
        #expect(run["done"] as? Int == done && run["total"] as? Int == total, "\(run)")
        #expect(run["resume"] == nil)
        #expect(running.text.contains("running (pid "), "\(running.text)")
        #expect(running.status == exitWhileRunning, "a run running is no concern: \(running.text)")

        process.signal(SIGKILL)
        #expect(process.wait().signalled)
        let stopped = try StatusReading(ledger)
        let after = try #require(stopped.runs.first, "status lists the killed run: \(stopped.text)")
        #expect(after["state"] as? String == "stopped" && after["done"] as? Int == done, "\(after)")
        #expect(stopped.status == 1, "a run stopped without finishing is a concern: \(stopped.text)")
        #expect(stopped.text.contains("STOPPED without finishing") && stopped.text.contains("NOT ON TRACK"), "\(stopped.text)")
        #expect(stopped.concerns.contains { $0.contains("\(command) run") && $0.contains("stopped without finishing") }, "\(stopped.concerns)")
        let resume = try #require(after["resume"] as? String)
        #expect(stopped.next.contains { $0.hasSuffix(resume) }, "the next steps print it: \(stopped.next)")
        return resume
    }
}

/// A command Handover printed for a person to run, run as printed by a shell, with only the
/// words in capitals filled in, and `handover` found on the PATH as a person's would.
public enum PrintedCommand {
    /// The command lines in `text`: each `handover …` after a colon, a backtick or the start of
    /// a line, to the end of the line or the closing backtick, without a parenthesis after it.
    public static func commands(in text: String) -> [String] {
        var found: [String] = []
        for line in text.split(whereSeparator: \.isNewline).map(String.init) {
            var rest = Substring(line)
            while let start = rest.range(of: "handover ") {
                let before = rest[..<start.lowerBound]
                let quoted = before.last == "`"
                let starts = before.allSatisfy { $0 == " " || $0 == "$" } || before.hasSuffix(": ") || quoted || before.hasSuffix("with ")
                var command = rest[start.lowerBound...]
                if quoted, let end = command.firstIndex(of: "`") { command = command[..<end] }
                if let aside = command.range(of: " (") { command = command[..<aside.lowerBound] }
                if let clause = command.range(of: "; ") { command = command[..<clause.lowerBound] }
                if let then = command.range(of: ", then ") { command = command[..<then.lowerBound] }
                rest = rest[start.upperBound...]
                if starts { found.append(String(command).trimmingCharacters(in: CharacterSet(charactersIn: " .,"))) }
            }
        }
        return found
    }

    /// The words of `command` in capitals (a placeholder: `FILE`, `SENDER.PUB`, `YYYY-MM-DD`):
    /// whole words, or after `=`, of two letters or more and no digit (a team ID is not one).
    public static func placeholders(in command: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: "(?<![A-Za-z0-9_./-])[A-Z][A-Z_.-]*[A-Z](?![A-Za-z0-9_./-])")
        let range = NSRange(command.startIndex..., in: command)
        return Set(pattern.matches(in: command, range: range).compactMap { Range($0.range, in: command).map { String(command[$0]) } })
    }

    /// Runs `command` with `sh -c` in `directory` (by default the test's), each capitals word in
    /// `fill` replaced, `handover` on the PATH and `environment` added.
    public static func run(
        _ command: String, fill: [String: String] = [:], environment: [String: String] = [:], in directory: String? = nil
    ) throws -> (
        status: Int32, out: String, err: String, command: String
    ) {
        var filled = command
        // Longest first, so that a word inside another is not filled in its place.
        for (word, value) in fill.sorted(by: { $0.key.count > $1.key.count }) { filled = filled.replacingOccurrences(of: word, with: value) }
        if let directory { filled = "cd \(ShellWord.quoted(directory)) && " + filled }
        let directory = URL(fileURLWithPath: productPath("handover")).deletingLastPathComponent().path
        var env = environment
        env["PATH"] = directory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let r = try runCommand("/bin/sh", ["-c", filled], environment: env)
        return (r.status, r.out, r.err, filled)
    }
}
