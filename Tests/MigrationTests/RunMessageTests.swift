import Basics
import Foundation
import Ledger
import TestSupport
import Testing

/// What the migration commands print for people, run as users run them against the stand-in:
/// the words they read and the exit status with them.
@Suite("run messages", .serialized)
struct RunMessageTests {
    let dir = TemporaryDirectory()

    /// The stand-in's state directory, with teams A and B registered.
    private func apple() throws -> String {
        let apple = dir.sub("apple")
        try SimulatorProcess.registerTeam("AAAA111111", keyID: "KEYA111111", in: apple)
        try SimulatorProcess.registerTeam("BBBB222222", keyID: "KEYB222222", in: apple)
        return apple
    }

    /// Credential and endpoint flags for `team` with key `key`, calling `baseURL`.
    private func credentials(_ team: String, _ key: String, baseURL: String) -> [String] {
        [
            "--team-id", team, "--client-id", "com.example.app", "--key-id", key, "--private-key", dir.sub("apple") + "/keys/AuthKey_\(key).p8",
            "--apple-base-url", baseURL,
        ]
    }

    /// A new ledger at `dir/name`.
    private func ledger(_ name: String, team: String, role: String) throws -> String {
        let path = dir.sub(name)
        let created = try handover("init", "--ledger", path, "--team-id", team, "--client-id", "com.example.app", "--role", role)
        #expect(created.status == 0, "\(created.err)")
        return path
    }

    /// A users file of `count` users for team A.
    private func users(_ count: Int) throws -> String {
        let path = dir.sub("users-\(count).csv")
        try Data(("sub,account_id\n" + (0..<count).map { "001000.aaaa.\(String(format: "%04d", $0)),acct-\($0)\n" }.joined()).utf8)
            .write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(
        "generate's summary counts the transfer identifiers generated, one in the singular; handoff issue tells team B to receive the package with team A's exported verifier key, then exchange"
    )
    func generateAndIssue() throws {
        let standIn = try SimulatorProcess.start(directory: try apple())
        defer { _ = standIn.stop() }
        let a = try ledger("a", team: "AAAA111111", role: "sender")
        let generated = try handover(
            ["generate", "--ledger", a, "--users", try users(1), "--target", "BBBB222222", "--out", dir.sub("handoff.csv")]
                + credentials("AAAA111111", "KEYA111111", baseURL: standIn.baseURL))
        #expect(generated.status == 0, "\(generated.out)\(generated.err)")
        #expect(generated.out.hasPrefix("generate: 1 user in the input; 1 transfer identifier generated in this run\n"), "\(generated.out)")
        #expect(generated.out.contains("  wrote 1 row to \(dir.sub("handoff.csv"))\n") && !generated.out.contains("migrated"), "\(generated.out)")

        let package = dir.sub("handoff-0001")
        let issued = try handover("handoff", "issue", "--ledger", a, "--target", "BBBB222222", "--out", package)
        #expect(issued.status == 0, "\(issued.err)")
        #expect(
            issued.out.hasSuffix(
                """
                Send the directory to team BBBB222222, with this ledger's verifier key given out of band (once), which they pin:
                  handover checkpoint --ledger \(a) --public-key > SENDER.PUB
                The day it arrives, team BBBB222222 checks it and records its users, then exchanges them (LEDGER being theirs):
                  handover handoff receive \(package) --ledger LEDGER --sender-key SENDER.PUB
                  handover exchange --ledger LEDGER --transfers \(package) --sender-key SENDER.PUB --out EXCHANGED.CSV

                """), "\(issued.out)")
        #expect(!issued.out.contains("A.pub"), "\(issued.out)")
    }

    @Test(
        "a run stopped by Apple says each thing once: refused credentials (exit 3) without \"Apple refused the credentials: Apple refused\", a Retry-After too long (exit 1) without the HTTP status twice"
    )
    func appleRefusalsSaidOnce() throws {
        let apple = try apple()
        let a = try ledger("a", team: "AAAA111111", role: "sender")
        let users = try users(1)
        let standIn = try SimulatorProcess.start(directory: apple)
        defer { _ = standIn.stop() }
        // Team B's key for team A: Apple refuses the client secret.
        let refused = try handover(
            ["generate", "--ledger", a, "--users", users, "--target", "BBBB222222", "--out", dir.sub("h.csv")]
                + credentials("AAAA111111", "KEYB222222", baseURL: standIn.baseURL))
        #expect(refused.status == 3, "exit \(refused.status)\n\(refused.out)\(refused.err)")
        #expect(refused.err.hasPrefix("error: Apple refused the client credentials (invalid_client"), "\(refused.err)")
        #expect(
            !refused.err.contains("Apple refused the credentials: Apple refused")
                && !refused.out.contains("Apple refused the credentials: Apple refused"), "\(refused.out)\(refused.err)")

        let throttling = try SimulatorProcess.start(directory: apple, extra: ["--rate-429", "1", "--retry-after", "3600"])
        defer { _ = throttling.stop() }
        let waited = try handover(
            ["generate", "--ledger", a, "--users", users, "--target", "BBBB222222", "--out", dir.sub("h.csv"), "--max-retry-after", "1"]
                + credentials("AAAA111111", "KEYA111111", baseURL: throttling.baseURL))
        #expect(waited.status == 1, "exit \(waited.status)\n\(waited.out)\(waited.err)")
        #expect(waited.err.hasSuffix("(--max-retry-after): rate_limited: Apple is throttling (HTTP 429)\n"), "\(waited.err)")
        #expect(!(waited.out + waited.err).contains("(HTTP 429) (HTTP 429)"), "\(waited.out)\(waited.err)")
    }

    @Test(
        "Apple unreachable: the run says it could not connect to the URL and why (connection refused), parentheses balanced, and stops resumably (exit 1)"
    )
    func appleUnreachable() throws {
        _ = try apple()
        let a = try ledger("a", team: "AAAA111111", role: "sender")
        let r = try handover(
            ["generate", "--ledger", a, "--users", try users(1), "--target", "BBBB222222", "--out", dir.sub("h.csv"), "--outage-limit", "1"]
                + credentials("AAAA111111", "KEYA111111", baseURL: "http://127.0.0.1:9"))
        #expect(r.status == 1, "exit \(r.status)\n\(r.out)\(r.err)")
        #expect(r.err.hasSuffix(": connection: could not connect to http://127.0.0.1:9/auth/token: connection refused\n"), "\(r.err)")
        #expect(
            r.err.contains(
                "handover: Apple unavailable: connection: could not connect to http://127.0.0.1:9/auth/token: connection refused. Waiting for it"),
            "\(r.err)")
        for line in r.err.split(separator: "\n") {
            #expect(line.filter { $0 == "(" }.count == line.filter { $0 == ")" }.count, "\(line)")
        }
        #expect(!r.err.contains("errno") && !r.err.contains("reset"), "\(r.err)")
    }

    @Test(
        "preflight's input line: each problem of the file on its own line, naming the file once (exit 2); a duplicate row's warning on its own line")
    func preflightInputProblems() throws {
        _ = try apple()
        let a = try ledger("a", team: "AAAA111111", role: "sender")
        let bad = dir.sub("bad.csv")
        try Data("sub,account_id\n001001.aaaa.0001,acct-1\n001002.aaaa.0002,acct-1\n001003.aaaa.0003\n".utf8).write(to: URL(fileURLWithPath: bad))
        let r = try handover(["preflight", "--ledger", a, "--users", bad] + credentials("AAAA111111", "KEYA111111", baseURL: "http://127.0.0.1:9"))
        #expect(r.status == 2, "exit \(r.status)\n\(r.out)\(r.err)")
        let lines = r.out.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("FAIL    input ") }, "\(r.out)")
        let block = lines[start...].prefix { $0 == lines[start] || $0.hasPrefix("      ") }
        let text = block.map { $0.dropFirst(8 + "access token".count + 2) }.joined(separator: " ")
        #expect(
            text == "\(bad), line 3: account_id acct-1 is already used on line 2 for a different sub \(bad), line 4: has 1 field, the header has 2",
            "\(r.out)")
        #expect(!r.out.contains("\\n") && !r.out.contains("\(bad): \(bad)"), "\(r.out)")
        // Each problem starts a line of its own (a long path may wrap the rest onto the next).
        #expect(
            Self.problems(block, path: bad) == [
                "\(bad), line 3: account_id acct-1 is already used on line 2 for a different sub", "\(bad), line 4: has 1 field, the header has 2",
            ], "one problem a line: \(r.out)")

        let duplicated = dir.sub("dup.csv")
        try Data("sub,account_id\n001001.aaaa.0001,acct-1\n001002.aaaa.0002,acct-2\n001001.aaaa.0001,acct-1\n".utf8).write(
            to: URL(fileURLWithPath: duplicated))
        let warned = try handover(
            ["preflight", "--ledger", a, "--users", duplicated] + credentials("AAAA111111", "KEYA111111", baseURL: "http://127.0.0.1:9"))
        let warning = warned.out.split(separator: "\n").map(String.init).drop { !$0.hasPrefix("warn    input ") }.prefix { !$0.hasPrefix("ok ") }
        #expect(
            Self.problems(warning, path: duplicated) == [
                "\(duplicated): 2 users", "\(duplicated), line 4: duplicate of line 2 (sub 001001.aaaa.0001); kept once",
            ], "\(warned.out)")
    }

    /// A preflight check's lines (its verdict and name in the first 22 columns), read back as
    /// the items it lists: each begins a line with `path`, and a line that does not continues
    /// the item before it (the terminal width wraps a long one).
    static func problems(_ lines: some Sequence<String>, path: String) -> [String] {
        var items: [String] = []
        for line in lines.map({ String($0.dropFirst(22)) }) {
            if line.hasPrefix(path) || items.isEmpty { items.append(line) } else { items[items.count - 1] += " " + line }
        }
        return items
    }

    @Test(
        "status after an exchange that failed its one user for good (revoked consent), then a sign-in that migrated them: on track (exit 0) both times, the run's exit status kept as history"
    )
    func statusAfterSignInMigratedTheLast() throws {
        let apple = try apple()
        let today = Timestamp.now().date
        let transfer = try handover(
            "simulator", "transfer", "--dir", apple, "--client-id", "com.example.app", "--from", "AAAA111111", "--to", "BBBB222222", "--accepted-at",
            today)
        #expect(transfer.status == 0, "\(transfer.err)")
        let a = try ledger("a", team: "AAAA111111", role: "sender")
        let b = try ledger("b", team: "BBBB222222", role: "recipient")
        #expect(try handover("window", "--ledger", b, "--accepted-at", today).status == 0)
        let handoff = dir.sub("handoff.csv")
        do {
            let standIn = try SimulatorProcess.start(directory: apple)
            defer { _ = standIn.stop() }
            let generated = try handover(
                ["generate", "--ledger", a, "--users", try users(1), "--target", "BBBB222222", "--out", handoff]
                    + credentials("AAAA111111", "KEYA111111", baseURL: standIn.baseURL))
            #expect(generated.status == 0, "\(generated.out)\(generated.err)")
        }
        // The user revoked consent: the exchange fails them, exit 1.
        let revoking = try SimulatorProcess.start(directory: apple, extra: ["--revoked-fraction", "1"])
        defer { _ = revoking.stop() }
        let exchanged = try handover(
            ["exchange", "--ledger", b, "--transfers", handoff, "--out", dir.sub("exchanged.csv"), "--breaker", "off"]
                + credentials("BBBB222222", "KEYB222222", baseURL: revoking.baseURL))
        #expect(
            exchanged.status == 1 && exchanged.out.contains("  exit status 1: 1 user is not done"),
            "exit \(exchanged.status)\n\(exchanged.out)\(exchanged.err)")
        // Apple refused them for good (they revoked consent): settled, not a failure on-call can
        // act on, so on track, and no retry suggested (a retry cannot help them).
        let before = try handover("status", "--ledger", b)
        #expect(before.status == 0 && before.out.contains("\non track\n"), "\(before.out)\(before.err)")
        #expect(before.out.contains("settled:      refused-by-apple 1 (no run changes them;"), "\(before.out)")
        #expect(!before.out.contains("--retry-failed") && !before.out.contains("failures:"), "\(before.out)")

        // They sign in during the window: the sign-in migrates them.
        let transferSub = try #require(
            try String(contentsOfFile: handoff, encoding: .utf8).split(whereSeparator: \.isNewline).dropFirst().first?.split(separator: ",").last.map(
                String.init))
        let token = try handover(
            "simulator", "mint-identity-token", "--dir", apple, "--client-id", "com.example.app",
            "--sub", "001999.0123456789abcdef0123456789abcdef.0001", "--transfer-sub", transferSub)
        #expect(token.status == 0, "\(token.err)")
        let tokenFile = dir.sub("sign-in.txt")
        try Data(token.out.utf8).write(to: URL(fileURLWithPath: tokenFile))
        let ingested = try handover("ingest", "sign-in", tokenFile, "--ledger", b, "--apple-base-url", revoking.baseURL)
        #expect(ingested.status == 0, "\(ingested.out)\(ingested.err)")

        let after = try handover("status", "--ledger", b)
        #expect(after.status == 0, "exit \(after.status)\n\(after.out)\(after.err)")
        #expect(
            after.out.contains("users:        migrated 1\n") && after.out.contains("\non track\n") && !after.out.contains("NOT ON TRACK"),
            "\(after.out)")
        #expect(after.out.contains("last run:     exchange, finished ") && after.out.contains(", exit 1, "), "the run stays in view: \(after.out)")
    }
}
