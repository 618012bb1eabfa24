import Basics
import ExitStatuses
import Foundation
import Ledger
import TestSupport
import Testing

/// The exit statuses: one type, the README's table equal to it, and the statuses the command
/// line ends with.
@Suite("exit statuses")
struct ExitStatusTests {
    @Test("the README's exit-code table lists every ExitStatus, with its meaning, and nothing else")
    func readmeTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let readme = try String(contentsOfFile: root + "/README.md", encoding: .utf8)
        let section = try #require(
            readme.components(separatedBy: "### Exit codes\n").dropFirst().first, "README.md has no \"### Exit codes\" section")
        let rows = section.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { !$0.hasPrefix("| status |") }.dropFirst(2)
            .prefix { $0.hasPrefix("|") }
            .map { line in line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
        let documented = rows.map { "\($0[0]) \($0[1])" }
        let declared = ExitStatus.allCases.map { "\($0.rawValue) \($0.meaning)" }
        #expect(documented == declared)
    }

    @Test("every command's help ends with the statuses it can exit with, each one of the table's; its manual page lists them with their meanings")
    func eachCommandSaysItsStatuses() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let dump = try JSONValue.parse(Array(try handover(["--experimental-dump-help"]).out.utf8))
        var leaves: [(String, String)] = []
        func walk(_ command: JSONValue, _ path: [String]) {
            let subs = command["subcommands"]?.arrayValue ?? []
            if subs.isEmpty, path.last != "help" { leaves.append((path.joined(separator: " "), command["discussion"]?.stringValue ?? "")) }
            for sub in subs { walk(sub, path + [sub["commandName"]?.stringValue ?? "?"]) }
        }
        walk(try #require(dump["command"]), [])
        let codes = Set(ExitStatus.allCases.map { String($0.rawValue) })
        for (command, discussion) in leaves {
            let sentence = try #require(discussion.split(separator: "\n").last.map(String.init), "\(command)")
            #expect(
                sentence.hasPrefix("Exit status: ") && sentence.hasSuffix(" (`handover --help` lists what each means)."), "\(command): \(sentence)")
            let listed = sentence.dropFirst("Exit status: ".count).prefix { $0 != "(" }.split { ", or".contains($0) }.map(String.init)
            #expect(!listed.isEmpty && Set(listed).isSubset(of: codes) && listed.contains("0") && listed.contains("2"), "\(command): \(listed)")
            let page = try String(
                contentsOfFile: root + "/docs/reference/man/handover-\(command.replacingOccurrences(of: " ", with: "-")).1", encoding: .utf8)
            let section = try #require(page.components(separatedBy: ".Sh \"EXIT STATUS\"\n").dropFirst().first, "\(command)'s page")
            for code in listed {
                let meaning = ExitStatus(rawValue: Int32(code)!)!.meaning.filter(\.isASCII)
                #expect(section.contains(".It \(code)\n\(meaning)"), "\(command)'s page lacks status \(code)")
            }
        }
        #expect(leaves.count > 40)
    }

    @Test("--version is the version events record, and CHANGELOG.md's top section is that version: unreleased for a -dev build, dated for a release")
    func versionAndChangelog() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let version = try handover(["--version"])
        #expect(version.status == 0 && version.out == "handover \(HandoverVersion.current)\n", "\(version.out)")
        let changelog = try String(contentsOfFile: root + "/CHANGELOG.md", encoding: .utf8)
        let top = try #require(changelog.split(separator: "\n").first { $0.hasPrefix("## ") })
        let current = HandoverVersion.current
        if current.hasSuffix("-dev") {
            #expect(top == "## \(current.dropLast(4)) - unreleased", "\(top)")
        } else {
            #expect(top.hasPrefix("## \(current) - 20") && top.count == "## \(current) - YYYY-MM-DD".count, "\(top)")
        }
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
        #expect(
            evidence.status == ExitStatus.usage.rawValue && evidence.err.hasPrefix("error: ")
                && evidence.err.contains("Usage: handover evidence write"), "\(evidence.err)")
        for asked in [["--help"], ["help"], ["help", "query"], ["query", "--help"]] {
            let r = try handover(asked)
            #expect(r.status == 0 && r.err.isEmpty && r.out.contains("USAGE: handover"), "\(asked): exit \(r.status)\n\(r.out)\n\(r.err)")
        }
    }

    @Test("a list that comes out empty exits 0; one user, identifier or event named on the command line that the ledger does not hold exits 1")
    func emptyListOrUnknownOne() throws {
        let dir = TemporaryDirectory()
        let empty = dir.sub("empty")
        #expect(
            try handover("init", "--ledger", empty, "--team-id", "BBBB222222", "--client-id", "com.example.app", "--role", "recipient").status == 0)
        #expect(try handover("checkpoint", "--ledger", empty).status == 0)
        for list in [
            ["pending"], ["migrated"], ["failures"], ["failures", "--by-class"], ["unmatched"], ["state"], ["events", "--type", "user-erased"],
        ] {
            let r = try handover(["query"] + list + ["--ledger", empty])
            #expect(r.status == 0 && r.out == "(no rows)\n" && r.err.isEmpty, "query \(list): exit \(r.status)\n\(r.out)\(r.err)")
        }
        let one: [(command: [String], message: String)] = [
            (["query", "user", "nobody"], "error: no user with identifier \"nobody\""),
            (["query", "events", "--id", "nobody"], "error: no user or notification with identifier \"nobody\""),
            (["erase", "nobody"], "error: no user with identifier \"nobody\""),
            (["evidence", "write", "nobody", "--out", dir.sub("bundle")], "error: no user with identifier \"nobody\""),
            (["prove", "2"], "error: there is no event 2 in this ledger: it holds events 1 to 1"),
            (["lookup", "nobody"], ""),
        ]
        for (command, message) in one {
            let r = try handover(command + ["--ledger", empty])
            #expect(r.status == ExitStatus.failed.rawValue && r.err.hasPrefix(message), "\(command): exit \(r.status)\n\(r.out)\(r.err)")
        }
        #expect(try handover("prove", "1", "--ledger", empty).status == 0)

        // A user the ledger holds, with no events of the type asked for: an empty list, exit 0.
        let demo = try DemoLedger.copy(.recipient, into: dir)
        let filtered = try handover("query", "events", "--id", "acct-00007", "--type", "handoff-refused", "--ledger", demo)
        #expect(filtered.status == 0 && filtered.out == "(no rows)\n", "\(filtered.out)\(filtered.err)")
        let found = try handover("query", "events", "--id", "acct-00007", "--ledger", demo)
        #expect(found.status == 0 && found.out.contains("account_id=acct-00007"), "\(found.out)\(found.err)")
        // As of before anything was recorded, the user is not there yet: 1, as `query user` says.
        let before = try handover("query", "events", "--id", "acct-00007", "--as-of", "2000-01-01", "--ledger", demo)
        #expect(
            before.status == 1 && before.err.hasPrefix("error: no user or notification with identifier \"acct-00007\" as of 2000-01-01"),
            "\(before.err)")
    }
}
