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

    @Test("a command group run without a subcommand prints its help on standard error and exits 2; --help and help exit 0")
    func groupWithoutSubcommand() throws {
        for group in [[], ["query"], ["handoff"], ["simulator"], ["projections"]] {
            let r = try handover(group)
            let name = (["handover"] + group).joined(separator: " ")
            #expect(r.status == ExitStatus.usage.rawValue, "\(name): exit \(r.status)")
            #expect(r.out.isEmpty && r.err.hasPrefix("error: `\(name)` needs a subcommand; its help follows\n"), "\(name): \(r.out)\n\(r.err)")
            #expect(r.err.contains("USAGE: \(name) <subcommand>") && r.err.contains("SUBCOMMANDS:"), "\(name): \(r.err)")
        }
        // `evidence` runs `evidence write`, which needs its user: a usage error too.
        let evidence = try handover(["evidence"])
        #expect(evidence.status == ExitStatus.usage.rawValue && evidence.err.hasPrefix("error: ") && evidence.err.contains("Usage: handover evidence write"), "\(evidence.err)")
        for asked in [["--help"], ["help"], ["help", "query"], ["query", "--help"]] {
            let r = try handover(asked)
            #expect(r.status == 0 && r.err.isEmpty && r.out.contains("USAGE: handover"), "\(asked): exit \(r.status)\n\(r.out)\n\(r.err)")
        }
    }
}
