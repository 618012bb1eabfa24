import Basics
import Foundation
import GRDB
import Ledger
import TestSupport
import Testing

/// Every command Handover prints for a person to run (`next:` steps, "to undo", "check it
/// with", the steps after a package is issued or received) runs as printed: a migration across
/// both teams, from `init` to an `apply` to the app's database, collects what each command
/// prints; each printed command is then run by a shell with only its words in capitals filled
/// in (`--dry-run` added to a generate or an exchange). The ledgers' directories hold a space,
/// so a path printed unquoted is found. The commands that resume a stopped run are run as
/// printed by the suites that stop one (`RunStandingTests`, `ApplyRunStandingTests`).
@Suite("every printed command runs as printed")
struct PrintedCommandsTests {
    /// A scenario's commands and what each printed.
    final class Transcript {
        let dir = TemporaryDirectory()
        var printed: [(command: String, text: String)] = []

        /// Runs `handover ARGUMENTS` and keeps what it printed.
        @discardableResult
        func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, out: String, err: String) {
            let r = try runProduct("handover", arguments, environment: environment)
            printed.append((arguments.prefix(2).joined(separator: " "), r.out + r.err))
            return r
        }
    }

    @Test(
        "a migration across both teams, init to apply: every command printed for a person (next steps, undo, check it with, the package's steps) exits other than 2 when run as printed, its capitals filled in"
    )
    func everyPrintedCommandRuns() throws {
        let t = Transcript()
        let apple = t.dir.sub("apple")
        try SimulatorProcess.registerTeam("AAAA111111", keyID: "KEYA111111", in: apple)
        try SimulatorProcess.registerTeam("BBBB222222", keyID: "KEYB222222", in: apple)
        let standIn = try SimulatorProcess.start(directory: apple)
        defer { standIn.stop() }
        func credentials(_ team: String, _ key: String) -> [String: String] {
            [
                "APPLE_TEAM_ID": team, "APPLE_CLIENT_ID": "com.example.app", "APPLE_KEY_ID": key,
                "APPLE_PRIVATE_KEY_PATH": apple + "/keys/AuthKey_\(key).p8", "HANDOVER_APPLE_BASE_URL": standIn.baseURL,
            ]
        }
        let teamA = credentials("AAAA111111", "KEYA111111")
        let teamB = credentials("BBBB222222", "KEYB222222")
        let a = t.dir.sub("team a ledger")
        let b = t.dir.sub("team b ledger")
        let users = t.dir.sub("users.csv")
        try Data(("sub,account_id\n" + (0..<20).map { "000\($0).\(String(format: "%08x", $0)).0001,acct-\($0)\n" }.joined()).utf8)
            .write(to: URL(fileURLWithPath: users))

        // Team A and team B, from init to apply, each command's output kept.
        #expect(try t.run(["init", "--ledger", a, "--role", "sender"], environment: teamA).status == 0)
        #expect(try t.run(["init", "--ledger", b, "--role", "recipient"], environment: teamB).status == 0)
        for ledger in [a, b] {
            try t.run(["status", "--ledger", ledger])
            try t.run(["window", "--ledger", ledger])
            try t.run(["witness", "list", "--ledger", ledger])
            try t.run(["tiles", "--ledger", ledger, "--out", t.dir.sub("tiles")])
        }
        try t.run(["preflight", "--ledger", b, "--users", users], environment: teamB)
        let generated = try t.run(
            ["generate", "--ledger", a, "--users", users, "--target", "BBBB222222", "--out", t.dir.sub("handoff.csv")], environment: teamA)
        #expect(generated.status == 0, "\(generated.err)")
        try t.run(["status", "--ledger", a])
        let package = t.dir.sub("handoff 0001")
        #expect(try t.run(["handoff", "issue", "--ledger", a, "--target", "BBBB222222", "--out", package]).status == 0)
        let senderKey = t.dir.sub("sender key.pub")
        try Data(try t.run(["checkpoint", "--ledger", a, "--public-key"]).out.utf8).write(to: URL(fileURLWithPath: senderKey))
        #expect(try t.run(["handoff", "receive", package, "--ledger", b, "--sender-key", senderKey]).status == 0)
        try t.run(["status", "--ledger", b])
        let exchanged = try t.run(
            ["exchange", "--ledger", b, "--transfers", package, "--sender-key", senderKey, "--out", t.dir.sub("exchanged.csv")], environment: teamB)
        #expect(exchanged.status == 0, "\(exchanged.err)")
        try t.run(["status", "--ledger", b])
        let recipientKey = t.dir.sub("recipient key.pub")
        try Data(try t.run(["checkpoint", "--ledger", b, "--public-key"]).out.utf8).write(to: URL(fileURLWithPath: recipientKey))
        let app = t.dir.sub("app.sqlite")
        try DatabaseQueue(path: app).write { db in
            try db.execute(sql: "CREATE TABLE accounts (id TEXT PRIMARY KEY, apple_sub TEXT)")
            for i in 0..<20 { try db.execute(sql: "INSERT INTO accounts VALUES (?, ?)", arguments: ["acct-\(i)", "old.\(i)"]) }
        }
        let apply = ["apply", "--ledger", b, "--to", app, "--table", "accounts", "--key", "account_id=id", "--set", "recipient_sub=apple_sub"]
        #expect(try t.run(apply).status == 0)
        let committed = try t.run(apply + ["--commit"])
        #expect(committed.status == 0 && committed.out.contains("To undo it: handover apply"), "\(committed.out)\(committed.err)")
        for ledger in [a, b] {
            try t.run(["status", "--ledger", ledger])
            try t.run(["checkpoint", "--ledger", ledger])
            try t.run(["backup", "--ledger", ledger, "--out", t.dir.sub("backup of \(ledger == a ? "a" : "b")")])
        }

        // Each command printed, once, filled in and run.
        let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
        let fill: [String: String] = [
            "USERS.CSV": users, "TEAM_ID": "BBBB222222", "TEAM": "BBBB222222", "HANDOFF.CSV": t.dir.sub("printed-handoff.csv"),
            "EXCHANGED.CSV": t.dir.sub("printed-exchanged.csv"), "SENDER.PUB": senderKey, "PACKAGE": package,
            "LEDGER": b, "TEAM_A_LEDGER": a, "RECIPIENT.PUB": recipientKey, "YYYY-MM-DD": today, "URL": "http://127.0.0.1:9/witness",
            "VKEY": try runProduct("handover", ["witness", "key", "--ledger", b]).out.trimmingCharacters(in: .whitespacesAndNewlines),
            "DATABASE": app, "TABLE": "accounts", "KEY_COLUMN": "id", "SUB_COLUMN": "apple_sub", "ID": "acct-1",
        ].mapValues(ShellWord.quoted)
        var seen = Set<String>()
        var ran = 0
        for (source, text) in t.printed {
            for command in PrintedCommand.commands(in: text) where seen.insert(command).inserted {
                let unknown = PrintedCommand.placeholders(in: command.replacingOccurrences(of: t.dir.path, with: "")).subtracting(fill.keys)
                #expect(unknown.isEmpty, "`\(source)` printed \(command), whose \(unknown.sorted()) this test does not know how to fill in")
                let words = command.split(separator: " ")
                let migration = words.count > 1 && ["generate", "exchange"].contains(words[1])
                let environment = words.count > 1 && words[1] == "generate" || command.contains(ShellWord.quoted(a)) ? teamA : teamB
                let r = try PrintedCommand.run(migration ? command + " --dry-run" : command, fill: fill, environment: environment, in: t.dir.path)
                #expect(r.status != 2, "`\(source)` printed \(command); run as \(r.command) it exits 2: \(r.err)")
                ran += 1
            }
        }
        let kinds = Set(seen.compactMap { $0.split(separator: " ").dropFirst().first.map(String.init) })
        #expect(
            kinds.isSuperset(of: ["preflight", "generate", "window", "handoff", "exchange", "apply", "verify", "checkpoint"]),
            "the scenario prints the commands of each step: \(kinds.sorted()) in \(ran) commands")
    }
}
