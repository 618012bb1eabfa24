import AppleSimulator
import Basics
import Foundation
import Ledger
import TestSupport
import Testing

/// `handover generate`, `exchange`, `client-secret` and `simulator` as separate processes.
@Suite("migration command line", .serialized)
struct CommandLineRunTests {
    let dir = TemporaryDirectory()

    private func register(_ team: String, _ key: String) throws -> String {
        try SimulatorProcess.registerTeam(team, keyID: key, in: dir.sub("apple"))
    }

    private func credentials(_ team: String, _ key: String, _ path: String) -> [String] {
        ["--team-id", team, "--client-id", "com.example.app", "--key-id", key, "--private-key", path]
    }

    @Test("client-secret prints an ES256 JWT that Python's cryptography verifies, with a 64-byte raw signature")
    func clientSecret() throws {
        let key = try register("AAAA111111", "KEYA111111")
        let r = try runProduct("handover", ["client-secret", "--lifetime", "3600"] + credentials("AAAA111111", "KEYA111111", key))
        #expect(r.status == 0, "\(r.err)")
        let token = r.out.trimmingCharacters(in: .whitespacesAndNewlines)
        let script = """
            import base64, json, sys, time
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
            token, key_path = sys.argv[1], sys.argv[2]
            b64 = lambda s: base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
            h, p, s = token.split(".")
            header, claims, sig = json.loads(b64(h)), json.loads(b64(p)), b64(s)
            # jwt-kit's header also says "typ": "JWT" (RFC 7519 5.1), beside what Apple asks for.
            assert header == {"alg": "ES256", "kid": "KEYA111111", "typ": "JWT"}, header
            assert claims["iss"] == "AAAA111111" and claims["sub"] == "com.example.app" and claims["aud"] == "https://appleid.apple.com", claims
            assert claims["exp"] - claims["iat"] == 3600 and abs(claims["iat"] - time.time()) < 60, claims
            assert len(sig) == 64, len(sig)
            key = serialization.load_pem_private_key(open(key_path, "rb").read(), None).public_key()
            der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
            key.verify(der, (h + "." + p).encode(), ec.ECDSA(hashes.SHA256()))
            print("verified", len(sig))
            """
        let py = try runPython(script, [token, key])
        #expect(py.status == 0 && py.out.contains("verified 64"), "\(py.err)")
        let tooLong = try runProduct("handover", ["client-secret", "--lifetime", "15777001"] + credentials("AAAA111111", "KEYA111111", key))
        #expect(tooLong.status == 2 && tooLong.err.contains("15777000"), "\(tooLong.err)")
    }

    @Test("bad input files get line-numbered errors, exit 2, and nothing is recorded or written")
    func badInput() async throws {
        let key = try register("AAAA111111", "KEYA111111")
        let ledger = dir.sub("a")
        let created = try runProduct(
            "handover", ["init", "--ledger", ledger, "--team-id", "AAAA111111", "--client-id", "com.example.app", "--role", "sender"])
        #expect(created.status == 0, "\(created.err)")
        let before = try Data(contentsOf: URL(fileURLWithPath: ledger + "/data.mdb"))
        let cases: [(String, String, String)] = [
            ("account_id,user\nacct-1,000.a.1\n", "line 1: has no \"sub\" column", "missing column"),
            ("", "line 1: is empty", "empty file"),
            ("sub,account_id\n000.a.1,acct-1\n,acct-2\n", "line 3: sub is empty", "empty identifier"),
            ("sub,account_id\n000.a.1,acct-1\n000 b.2,acct-2\n", "line 3: sub \"000 b.2\" contains", "malformed identifier"),
            ("sub,account_id\n000.a.1,acct-1\n000.b.2\n", "line 3: has 1 field, the header has 2", "short row"),
            ("sub,account_id\n000.a.1,\"acct-1\n", "line 2: opens a quoted field that never closes", "unterminated quote"),
            ("sub,account_id\n000.a.1,acct-1\n000.b.2,acct-1\n", "line 3: account_id acct-1 is already used on line 2", "account reused"),
            // Checked in time linear in the header (its duplicate check was once quadratic: minutes).
            (
                (0..<100_000).map { "column\($0)" }.joined(separator: ",") + "\n1\n", "\"column11\" and 99988 more); the first row must be a header",
                "100,000 columns, no sub"
            ),
            (
                Array(repeating: "sub", count: 100_000).joined(separator: ",") + "\n000.a.1\n", "line 1: header names column \"sub\" more than once",
                "100,000 columns named sub"
            ),
        ]
        for (text, message, name) in cases {
            let file = dir.sub("bad.csv")
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            let r = try runProduct(
                "handover",
                [
                    "generate", "--ledger", ledger, "--users", file, "--target", "BBBB222222", "--out", dir.sub("out.csv"),
                    "--apple-base-url", "http://127.0.0.1:9",
                ] + credentials("AAAA111111", "KEYA111111", key))
            #expect(r.status == 2, "\(name): \(r.err)")
            #expect(r.err.contains(message), "\(name): \(r.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.sub("out.csv")))
        #expect(try Data(contentsOf: URL(fileURLWithPath: ledger + "/data.mdb")) == before, "the ledger is untouched")

        // A BOM, CRLF, quoted fields and a duplicate row (kept once, with a warning) are fine:
        // the dry run says what would be done and calls nobody.
        let good = dir.sub("good.csv")
        try Data("\u{FEFF}sub,account_id\r\n\"000.a.1\",\"acct, 1\"\r\n000.b.2,acct-2\r\n000.a.1,\"acct, 1\"\r\n".utf8).write(
            to: URL(fileURLWithPath: good))
        let dry = try runProduct(
            "handover",
            [
                "generate", "--ledger", ledger, "--users", good, "--target", "BBBB222222", "--out", dir.sub("out.csv"), "--dry-run",
                "--apple-base-url", "http://127.0.0.1:9",
            ] + credentials("AAAA111111", "KEYA111111", key))
        #expect(dry.status == 0, "\(dry.err)")
        #expect(dry.err.contains("line 4: duplicate of line 2"), "\(dry.err)")
        #expect(dry.out.contains("2 users in the input") && dry.out.contains("would call Apple for"), "\(dry.out)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ledger + "/data.mdb")) == before)
    }

    @Test(
        "users.csv and the handoff file: identifiers of 400 bytes are taken; one of 401 bytes, one with NUL and one not UTF-8 are refused naming the line, and the ledger is unchanged"
    )
    func identifierLimits() async throws {
        let keyA = try register("AAAA111111", "KEYA111111")
        let keyB = try register("BBBB222222", "KEYB222222")
        let server = try SimulatorProcess.start(directory: dir.sub("apple"))
        defer { server.stop() }
        let a = dir.sub("a")
        let b = dir.sub("b")
        for (ledger, team, role) in [(a, "AAAA111111", "sender"), (b, "BBBB222222", "recipient")] {
            let created = try runProduct(
                "handover", ["init", "--ledger", ledger, "--team-id", team, "--client-id", "com.example.app", "--role", role])
            #expect(created.status == 0, "\(created.err)")
        }
        let longest = String(repeating: "7", count: 400)
        for (ledger, column, flag, team, key, path) in [
            (a, "sub", "--users", "AAAA111111", "KEYA111111", keyA), (b, "transfer_sub", "--transfers", "BBBB222222", "KEYB222222", keyB),
        ] {
            let run = ["generate", "exchange"][ledger == a ? 0 : 1]
            let target = ledger == a ? ["--target", "BBBB222222"] : []
            func attempt(_ bytes: [UInt8]) throws -> (status: Int32, out: String, err: String) {
                let file = dir.sub("input.csv")
                try Data(Array("\(column),account_id\n000.ok.1,acct-1\n".utf8) + bytes + Array(",acct-2\n".utf8)).write(
                    to: URL(fileURLWithPath: file))
                return try runProduct(
                    "handover",
                    [run, "--ledger", ledger, flag, file, "--out", dir.sub("out.csv"), "--apple-base-url", server.baseURL]
                        + target + credentials(team, key, path))
            }
            let before = try Data(contentsOf: URL(fileURLWithPath: ledger + "/data.mdb"))
            for (name, bytes) in [
                ("401 bytes", Array((longest + "7").utf8)), ("NUL", Array("000.a\u{0}b.1".utf8)),
                ("not UTF-8", [0x30, 0x2E, 0xC3, 0x28, 0x2E, 0x31]),
            ] {
                let r = try attempt(bytes)
                #expect(r.status == 2 && r.err.contains("input.csv, line 3:"), "\(run), \(name): \(r.err)")
                #expect(HostileStrings.rawControls(in: r.err).isEmpty, "\(run), \(name): the message shows the value inert")
                #expect(try Data(contentsOf: URL(fileURLWithPath: ledger + "/data.mdb")) == before, "\(run), \(name): the ledger is untouched")
            }
            // 400 bytes is an identifier: the run takes it (Apple answers what it answers).
            let taken = try attempt(Array(longest.utf8))
            #expect(taken.status == 0 || taken.status == 1, "\(run), 400 bytes: \(taken.err)")
            let events = try runProduct("handover", ["query", "events", "--ledger", ledger, "--id", longest, "--format", "json"])
            let recorded = try #require(JSONValue.parse(Array(events.out.utf8)).arrayValue)
            #expect(recorded.count == 1, "\(run): the 400-byte identifier's outcome is recorded: \(events.out) \(events.err)")
        }
    }

    @Test("the command exits 3 when Apple refuses the credentials, and names what to check")
    func refusedCredentials() async throws {
        let key = try register("AAAA111111", "KEYA111111")
        _ = try register("BBBB222222", "KEYB222222")
        let server = try SimulatorProcess.start(directory: dir.sub("apple"))
        defer { server.stop() }
        let url = server.baseURL
        let ledger = dir.sub("a")
        let created = try runProduct(
            "handover", ["init", "--ledger", ledger, "--team-id", "AAAA111111", "--client-id", "com.example.app", "--role", "sender"])
        #expect(created.status == 0, "\(created.err)")
        let users = dir.sub("users.csv")
        try Data("sub\n000.a.1\n000.b.2\n".utf8).write(to: URL(fileURLWithPath: users))
        let r = try runProduct(
            "handover",
            [
                "generate", "--ledger", ledger, "--users", users, "--target", "BBBB222222", "--out", dir.sub("out.csv"),
                "--apple-base-url", url,
            ] + credentials("AAAA111111", "WRONGKEY01", key))
        #expect(r.status == 3, "\(r.out) \(r.err)")
        #expect(r.err.contains("key ID") && r.err.contains("team ID") && r.err.contains("client ID"), "\(r.err)")
        #expect(r.err.components(separatedBy: "Apple refused the client credentials").count == 2, "said once, not once per worker: \(r.err)")
        let ok = try runProduct(
            "handover",
            [
                "generate", "--ledger", ledger, "--users", users, "--target", "BBBB222222", "--out", dir.sub("out.csv"),
                "--apple-base-url", url, "--format", "json",
            ] + credentials("AAAA111111", "KEYA111111", key))
        #expect(ok.status == 0, "\(ok.err)")
        #expect(ok.out.contains("\"succeeded\":2"))
    }

    @Test("missing credentials are named all at once, exit 2")
    func missingCredentials() throws {
        let r = try runProduct(
            "handover",
            ["generate", "--ledger", dir.sub("a"), "--users", dir.sub("users.csv"), "--target", "BBBB222222", "--out", dir.sub("out.csv")],
            unsetting: ["APPLE_TEAM_ID", "APPLE_CLIENT_ID", "APPLE_KEY_ID", "APPLE_PRIVATE_KEY_PATH"])
        #expect(r.status == 2, "\(r.err)")
        for option in ["--team-id", "--client-id", "--key-id", "--private-key"] { #expect(r.err.contains(option), "\(option) not named: \(r.err)") }
    }

    @Test(
        "nothing listening at Apple's address: standard error names the address and the refusal once, Ctrl-C stops the run within its grace period with exit 130, and no user is failed"
    )
    func nothingListeningThenInterrupted() async throws {
        let key = try register("AAAA111111", "KEYA111111")
        let ledger = dir.sub("a")
        #expect(
            try runProduct("handover", ["init", "--ledger", ledger, "--team-id", "AAAA111111", "--client-id", "com.example.app", "--role", "sender"])
                .status == 0)
        let users = dir.sub("users.csv")
        try Data(("sub\n" + (0..<50).map { "000.u.\($0)\n" }.joined()).utf8).write(to: URL(fileURLWithPath: users))
        // Port 9 (discard) on loopback: nothing listens there in a test machine.
        let run = try RunningProduct(
            "handover",
            [
                "generate", "--ledger", ledger, "--users", users, "--target", "BBBB222222", "--out", dir.sub("out.csv"),
                "--apple-base-url", "http://127.0.0.1:9", "--grace", "2",
            ] + credentials("AAAA111111", "KEYA111111", key))
        var waited = 0
        while !run.errorOutput.contains("Apple unavailable"), run.isRunning, waited < 600 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        try #require(run.errorOutput.contains("Apple unavailable"), "no word of Apple unavailable: \(run.errorOutput)")
        let interrupted = ContinuousClock.now
        run.signal(SIGINT)
        let ended = run.wait()
        // The grace period is 2 s; nothing in flight may hold the run for a request's timeout (30 s).
        #expect(ContinuousClock.now - interrupted < .seconds(20), "stopped \(ContinuousClock.now - interrupted) after Ctrl-C")
        #expect(ended.status == 130, "\(ended.out) \(ended.err)")
        #expect(
            ended.err.components(separatedBy: "Apple unavailable").count == 2 && ended.err.contains("127.0.0.1:9")
                && ended.err.lowercased().contains("refused"), "\(ended.err)")
        let failures = try runProduct("handover", ["query", "failures", "--ledger", ledger, "--format", "json"])
        #expect(
            [0, 1].contains(failures.status) && failures.out.trimmingCharacters(in: .whitespacesAndNewlines) == "[]",
            "\(failures.out) \(failures.err)")
    }

    /// Runs a Python script with arguments.
    private func runPython(_ script: String, _ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let file = dir.sub("check.py")
        try Data(script.utf8).write(to: URL(fileURLWithPath: file))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", file] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }
}
