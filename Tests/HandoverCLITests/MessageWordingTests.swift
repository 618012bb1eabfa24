import Basics
import Foundation
import Ledger
import TestSupport
import Testing

/// What the commands print for people: the words a user reads and the exit status with them.
@Suite("message wording")
struct MessageWordingTests {
    /// Runs `handover` with `args` in `directory`, as a user who typed relative paths there.
    static func handover(in directory: String, _ args: [String]) throws -> (status: Int32, out: String, err: String) {
        let quoted = ([productPath("handover")] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        return try runCommand("/bin/sh", ["-c", "cd '\(directory)' && exec " + quoted.joined(separator: " ")])
    }

    /// A new empty ledger at `directory/name` for `role`.
    static func newLedger(_ directory: TemporaryDirectory, _ name: String = "ledger", role: String = "recipient") throws -> String {
        let path = directory.sub(name)
        let made = try TestSupport.handover(
            "init", "--ledger", path, "--team-id", role == "sender" ? "AAAA111111" : "BBBB222222",
            "--client-id", "com.example.app", "--role", role)
        #expect(made.status == 0, "\(made.err)")
        return path
    }

    @Test("backup --out with a name and no directory part writes the copy in the current directory and exits 0")
    func backupToBareName() throws {
        let dir = TemporaryDirectory()
        _ = try Self.newLedger(dir, "L")
        let r = try Self.handover(in: dir.path, ["backup", "--ledger", "L", "--out", "bk"])
        #expect(r.status == 0 && r.err.isEmpty, "exit \(r.status)\n\(r.out)\(r.err)")
        #expect(r.out.hasPrefix("Backed up L to bk: "), "\(r.out)")
        let verified = try TestSupport.handover("verify", "--ledger", dir.sub("bk"))
        #expect(verified.status == 0, "\(verified.out)\(verified.err)")
    }

    @Test(
        "counts of one read in the singular: status's checkpoint step, verify, init into a directory holding one entry; report --as-of before the first event says none was recorded; reconcile's roles agree with two options"
    )
    func singularCounts() throws {
        let dir = TemporaryDirectory()
        let b = try Self.newLedger(dir, "b")
        let a = try Self.newLedger(dir, "a", role: "sender")

        let verified = try TestSupport.handover("verify", "--ledger", a)
        #expect(verified.status == 0 && verified.out.hasPrefix("OK: 1 event, chain intact"), "\(verified.out)\(verified.err)")

        #expect(try TestSupport.handover("checkpoint", "--ledger", b).status == 0)
        let date = Timestamp.now().date
        #expect(try TestSupport.handover("window", "--ledger", b, "--accepted-at", date).status == 0)
        let status = try TestSupport.handover("status", "--ledger", b)
        #expect(
            status.status == 0 && status.out.contains("  - sign a checkpoint over the 1 event since the last: handover checkpoint"),
            "\(status.out)\(status.err)")

        let report = try TestSupport.handover("report", "--ledger", b, "--as-of", "2020-01-01T00:00:00Z")
        #expect(
            report.status == 0 && report.out.contains("As of 2020-01-01T00:00:00.000000Z: no event had been recorded by then\n"),
            "\(report.out)\(report.err)")
        #expect(!report.out.contains("events 1 to 0"), "\(report.out)")

        let crossed = try TestSupport.handover("reconcile", "--sender", b, "--recipient", a)
        #expect(
            crossed.status == 2 && crossed.err.hasPrefix("error: --sender and --recipient take team A's ledger and team B's, in that order: "),
            "\(crossed.err)")

        let occupied = dir.sub("occupied")
        try FileManager.default.createDirectory(atPath: occupied, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: occupied + "/notes.txt", contents: Data()))
        let made = try TestSupport.handover(
            "init", "--ledger", occupied, "--team-id", "BBBB222222", "--client-id", "com.example.app", "--role", "recipient")
        #expect(
            made.status == 2 && made.err == "error: \(occupied) is not empty (it holds 1 entry); choose a new or empty directory\n",
            "exit \(made.status)\n\(made.err)")
    }

    @Test(
        "a secret too short is refused naming which secret: the sign-in secret at init, the tiles read secret at serve --tiles; a stored digest that is not one, naming its file"
    )
    func shortSecretsNamed() throws {
        let dir = TemporaryDirectory()
        let short = dir.sub("short.txt")
        try "only-eleven".write(toFile: short, atomically: true, encoding: .utf8)
        let made = try TestSupport.handover(
            "init", "--ledger", dir.sub("b"), "--team-id", "BBBB222222", "--client-id", "com.example.app", "--role", "recipient",
            "--sign-in-secret-file", short)
        #expect(made.status == 2 && made.err == "error: the sign-in secret must be at least 16 bytes\n", "exit \(made.status)\n\(made.err)")

        let ledger = try Self.newLedger(dir)
        let served = try TestSupport.handover(
            "serve", "--ledger", ledger, "--port", "0", "--tiles", dir.sub("tiles"), "--tiles-read-secret-file", short)
        #expect(
            served.status == 2 && served.err == "error: the tiles read secret must be at least 16 bytes\n", "exit \(served.status)\n\(served.err)")
        let missing = try TestSupport.handover(
            "serve", "--ledger", ledger, "--port", "0", "--tiles", dir.sub("tiles"), "--tiles-read-secret-file", dir.sub("none.txt"))
        #expect(
            missing.status == 2 && missing.err.hasPrefix("error: cannot read the tiles read secret file: "), "exit \(missing.status)\n\(missing.err)")

        let stored = ledger + "/sign-in-secret.sha256"
        try "not-a-digest\n".write(toFile: stored, atomically: true, encoding: .utf8)
        let damaged = try TestSupport.handover("serve", "--ledger", ledger, "--port", "0")
        #expect(
            damaged.status == 2
                && damaged.err == "error: \(stored) does not hold a SHA-256 digest in hex: give `serve --sign-in-secret-file` instead\n",
            "exit \(damaged.status)\n\(damaged.err)")
    }

    @Test("exchange --help names the output file's columns as the file has them, and --breaker's default as the user writes it")
    func exchangeHelp() throws {
        let help = try TestSupport.handover("exchange", "--help")
        // Help is wrapped to the terminal's width: compared with its words joined by single spaces.
        let words = help.out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.status == 0 && words.contains("writes account_id,transfer_sub,recipient_sub,email,is_private_email."), "\(help.out)")
        #expect(words.contains("a percentage, or off. (default: 95%)"), "\(help.out)")
        for command in ["exchange", "generate"] {
            let r = try TestSupport.handover(command, "--help")
            #expect(!r.out.contains("percent("), "\(command): \(r.out)")
        }
    }

    @Test(
        "init ends with the next steps of the ledger's role: team A checks its set-up and generates, team B receives the package; both record the date once the transfer is accepted"
    )
    func initNextSteps() throws {
        let dir = TemporaryDirectory()
        let a = try TestSupport.handover(
            "init", "--ledger", dir.sub("a"), "--team-id", "AAAA111111", "--client-id", "com.example.app", "--role", "sender")
        #expect(
            a.status == 0
                && a.out.hasSuffix(
                    """
                    Next (the words in capitals are yours to fill in):
                      - check the set-up: handover preflight --ledger \(dir.sub("a")) --users USERS.CSV
                      - generate the transfer identifiers: handover generate --ledger \(dir.sub("a")) --users USERS.CSV --target TEAM_ID --out HANDOFF.CSV
                      - once the transfer is accepted, record its date: handover window --ledger \(dir.sub("a")) --accepted-at YYYY-MM-DD

                    """),
            "\(a.out)\(a.err)")
        let b = try TestSupport.handover(
            "init", "--ledger", dir.sub("b"), "--team-id", "BBBB222222", "--client-id", "com.example.app", "--role", "recipient")
        #expect(
            b.status == 0
                && b.out.hasSuffix(
                    """
                    Next (the words in capitals are yours to fill in):
                      - the day team A's package arrives, receive it with their verifier key, pinned out of band: handover handoff receive PACKAGE --ledger \(dir.sub("b")) --sender-key SENDER.PUB
                      - once the transfer is accepted, record its date: handover window --ledger \(dir.sub("b")) --accepted-at YYYY-MM-DD

                    """),
            "\(b.out)\(b.err)")
    }

    @Test("serve and simulator serve on a port another process listens on: exit 2 naming HOST:PORT and that the address is in use")
    func portInUse() throws {
        let dir = TemporaryDirectory()
        let ledger = try Self.newLedger(dir)
        let first = try ServerProcess(["serve", "--ledger", ledger, "--port", "0"])
        defer { first.stop() }
        let port = try #require(first.baseURL.split(separator: ":").last.map(String.init))
        let second = try TestSupport.handover("serve", "--ledger", ledger, "--port", port)
        #expect(second.status == 2, "exit \(second.status)\n\(second.out)\(second.err)")
        #expect(
            second.err.hasSuffix("error: cannot listen on 127.0.0.1:\(port): the address is in use (another process listens there)\n"),
            "\(second.err)")
        let standIn = try TestSupport.handover("simulator", "serve", "--dir", dir.sub("apple"), "--port", port)
        #expect(standIn.status == 2, "exit \(standIn.status)\n\(standIn.out)\(standIn.err)")
        #expect(standIn.err == "error: cannot listen on 127.0.0.1:\(port): the address is in use (another process listens there)\n", "\(standIn.err)")
    }

    @Test("serve with a --tls-cert or --tls-key that is missing or not PEM: exit 2 naming the option, the file and what is wrong, before it listens")
    func unreadableTLSFiles() throws {
        let dir = TemporaryDirectory()
        let ledger = try Self.newLedger(dir)
        let junk = dir.sub("junk.pem")
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: junk))
        let cases: [(cert: String, key: String, message: String)] = [
            (dir.sub("nothere.pem"), junk, "error: --tls-cert \(dir.sub("nothere.pem")): no such file\n"),
            (junk, dir.sub("nothere.pem"), "error: --tls-key \(dir.sub("nothere.pem")): no such file\n"),
            (junk, junk, "error: --tls-cert \(junk): not a PEM certificate chain"),
            (dir.path, junk, "error: --tls-cert \(dir.path): is a directory, not a PEM file\n"),
        ]
        for (cert, key, message) in cases {
            let r = try TestSupport.handover("serve", "--ledger", ledger, "--port", "0", "--tls-cert", cert, "--tls-key", key)
            #expect(r.status == 2 && r.err.hasPrefix(message) && r.out.isEmpty, "\(cert) \(key): exit \(r.status)\n\(r.out)\(r.err)")
        }
    }

    @Test(
        "prove 0 is bad usage (exit 2: events are numbered from 1); an event past the head is not in the ledger (exit 1); one past the checkpoint asks for a newer checkpoint (exit 2)"
    )
    func proveOutOfRange() throws {
        let dir = TemporaryDirectory()
        let ledger = try Self.newLedger(dir)
        #expect(try TestSupport.handover("checkpoint", "--ledger", ledger).status == 0)
        #expect(try TestSupport.handover("window", "--ledger", ledger, "--accepted-at", Timestamp.now().date).status == 0)
        let zero = try TestSupport.handover("prove", "0", "--ledger", ledger)
        #expect(
            zero.status == 2 && zero.err.hasPrefix("error: there is no event 0: a ledger's events are numbered from 1\n") && zero.out.isEmpty,
            "exit \(zero.status)\n\(zero.err)")
        let past = try TestSupport.handover("prove", "3", "--ledger", ledger)
        #expect(
            past.status == 1 && past.err == "error: there is no event 3 in this ledger: it holds events 1 to 2\n", "exit \(past.status)\n\(past.err)")
        let uncovered = try TestSupport.handover("prove", "2", "--ledger", ledger)
        #expect(
            uncovered.status == 2 && uncovered.err.hasPrefix("error: event 2 is not covered by the checkpoint of 1 event; sign a newer one"),
            "exit \(uncovered.status)\n\(uncovered.err)")
    }

    @Test("evidence verify of a path that does not exist, or of a file, is bad usage (exit 2) saying so, not a bundle that does not hold")
    func evidenceVerifyMissingDirectory() throws {
        let dir = TemporaryDirectory()
        let missing = try TestSupport.handover("evidence", "verify", dir.sub("nothere"))
        #expect(
            missing.status == 2 && missing.err == "error: \(dir.sub("nothere")) does not exist: give the evidence bundle's directory\n",
            "exit \(missing.status)\n\(missing.err)")
        let file = dir.sub("file.txt")
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        let notDirectory = try TestSupport.handover("evidence", "verify", file)
        #expect(
            notDirectory.status == 2 && notDirectory.err == "error: \(file) is not a directory: give the evidence bundle's directory\n",
            "exit \(notDirectory.status)\n\(notDirectory.err)")
        // An empty directory is a bundle that does not hold: exit 4.
        let empty = dir.sub("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let r = try TestSupport.handover("evidence", "verify", empty)
        #expect(r.status == 4 && r.err.hasPrefix("error: the bundle does not hold: "), "exit \(r.status)\n\(r.err)")
    }

    @Test(
        "export --include-personal-data from a copy without keys is refused (exit 2) saying the copy holds no keys, and writes nothing; without the flag it exports"
    )
    func personalDataFromCopyWithoutKeys() throws {
        let dir = TemporaryDirectory()
        let ledger = try Self.newLedger(dir)
        let copy = dir.sub("copy")
        #expect(try TestSupport.handover("backup", "--ledger", ledger, "--out", copy, "--without-keys").status == 0)
        let out = dir.sub("export.sqlite")
        let refused = try TestSupport.handover("export", "--ledger", copy, "--format", "sqlite", "--out", out, "--include-personal-data")
        #expect(refused.status == 2 && refused.out.isEmpty, "exit \(refused.status)\n\(refused.out)\(refused.err)")
        #expect(
            refused.err
                == "error: \(copy) holds no data keys (a copy made without keys): its email addresses are sealed for good and cannot be exported; export without --include-personal-data\n",
            "\(refused.err)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let plain = try TestSupport.handover("export", "--ledger", copy, "--format", "sqlite", "--out", out)
        #expect(plain.status == 0 && !plain.out.contains("personal data"), "\(plain.out)\(plain.err)")
    }
}
