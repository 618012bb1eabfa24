import Foundation
import Ledger
import Testing
import TestSupport

/// The exit statuses: one type, the README's table equal to it, and the statuses the command
/// line ends with.
@Suite("exit statuses")
struct ExitStatusTests {
    @Test("the README's exit-code table lists every ExitStatus, with its meaning, and nothing else")
    func readmeTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let readme = try String(contentsOfFile: root + "/README.md", encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "### Exit codes\n").dropFirst().first, "README.md has no \"### Exit codes\" section")
        let rows = section.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { !$0.hasPrefix("| status |") }.dropFirst(2)
            .prefix { $0.hasPrefix("|") }
            .map { line in line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
        let documented = rows.map { "\($0[0]) \($0[1])" }
        let declared = ExitStatus.allCases.map { "\($0.rawValue) \($0.meaning)" }
        #expect(documented == declared)
    }

    @Test("usage errors exit 2 with one prefix, ArgumentParser's own included; help exits 0")
    func usageAndHelp() throws {
        let unknown = try handover(["query", "state", "--no-such-flag"])
        #expect(unknown.status == ExitStatus.usage.rawValue && unknown.err.hasPrefix("error: "), "exit \(unknown.status)\n\(unknown.err)")
        let missing = try handover(["query", "state", "--ledger", "/nonexistent/ledger"])
        #expect(missing.status == ExitStatus.usage.rawValue && missing.err.hasPrefix("error: "), "exit \(missing.status)\n\(missing.err)")
        let help = try handover(["--help"])
        // Help is wrapped to the terminal's width: compared with its words joined by single spaces.
        let words = help.out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.status == 0 && words.contains("143 a run interrupted by SIGTERM"), "exit \(help.status)\n\(help.out)\n\(help.err)")
    }
}
