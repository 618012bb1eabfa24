import Foundation

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

    /// The words of `command` in capitals (a placeholder: `FILE`, `SENDER.PUB`, `YYYY-MM-DD`).
    public static func placeholders(in command: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: "[A-Z][A-Z0-9_.-]*[A-Z0-9]")
        let range = NSRange(command.startIndex..., in: command)
        return Set(
            pattern.matches(in: command, range: range).compactMap { Range($0.range, in: command).map { String(command[$0]) } }.filter {
                $0.count > 1 && !$0.allSatisfy(\.isNumber)
            })
    }

    /// Runs `command` with `sh -c`, each capitals word in `fill` replaced, `handover` on the
    /// PATH and `environment` added.
    public static func run(
        _ command: String, fill: [String: String] = [:], environment: [String: String] = [:]
    ) throws -> (
        status: Int32, out: String, err: String, command: String
    ) {
        var filled = command
        // Longest first, so that a word inside another is not filled in its place.
        for (word, value) in fill.sorted(by: { $0.key.count > $1.key.count }) { filled = filled.replacingOccurrences(of: word, with: value) }
        let directory = URL(fileURLWithPath: productPath("handover")).deletingLastPathComponent().path
        var env = environment
        env["PATH"] = directory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let r = try runCommand("/bin/sh", ["-c", filled], environment: env)
        return (r.status, r.out, r.err, filled)
    }
}
