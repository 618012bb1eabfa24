import Basics
import Foundation
import Ledger
import TestSupport
import Testing

/// `handover simulator` as a document's reader runs it: each setup command says what it did, and
/// a seeded stand-in faults the same users the same way every time.
@Suite("the Apple stand-in's commands")
struct SimulatorCommandTests {
    let dir = TemporaryDirectory()

    @Test("register-team takes a key ID of Apple's form and prints it; another form exits 2 and registers nothing")
    func registerTeamKeyID() throws {
        let sim = dir.sub("sim")
        let r = try handover(
            "simulator", "register-team", "--dir", sim, "--team-id", "AAAA111111", "--client-id", "com.example.app", "--key-id", "KEYA111111")
        #expect(r.status == 0 && r.out == "team AAAA111111 key-id KEYA111111 private-key \(sim)/keys/AuthKey_KEYA111111.p8\n", "\(r.out)\(r.err)")
        #expect(FileManager.default.fileExists(atPath: sim + "/keys/AuthKey_KEYA111111.p8"))

        // Without --key-id, a new one of the same form.
        let fresh = try handover("simulator", "register-team", "--dir", sim, "--team-id", "BBBB222222", "--client-id", "com.example.app")
        let words = fresh.out.split(separator: " ")
        #expect(fresh.status == 0 && words.count == 6 && words[2] == "key-id" && words[3].count == 10, "\(fresh.out)\(fresh.err)")

        for bad in ["KEYA11111", "keya111111", "KEYA-11111", "KEYA1111111"] {
            let refused = try handover(
                "simulator", "register-team", "--dir", sim, "--team-id", "CCCC333333", "--client-id", "com.example.app", "--key-id", bad)
            #expect(
                refused.status == 2 && refused.out.isEmpty
                    && refused.err.hasPrefix("error: --key-id: \"\(bad)\" is not 10 characters of A-Z and 0-9"), "\(bad): \(refused.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: sim + "/teams/CCCC333333.json"))
        let badTeam = try handover("simulator", "register-team", "--dir", sim, "--team-id", "short", "--client-id", "com.example.app")
        #expect(badTeam.status == 2 && badTeam.err.hasPrefix("error: --team-id: \"short\""), "\(badTeam.err)")
    }

    @Test("revoke prints one line per user: revoked consent, or already revoked")
    func revokeSaysWhatItRecorded() throws {
        let sim = dir.sub("sim")
        var r = try handover("simulator", "revoke", "--dir", sim, "000123.abc.0456", "000124.def.0457")
        #expect(r.status == 0 && r.out == "revoked consent: 000123.abc.0456\nrevoked consent: 000124.def.0457\n", "\(r.out)\(r.err)")
        r = try handover("simulator", "revoke", "--dir", sim, "000124.def.0457", "000125.ghi.0458")
        #expect(r.status == 0 && r.out == "already revoked: 000124.def.0457\nrevoked consent: 000125.ghi.0458\n", "\(r.out)\(r.err)")
        let listed = try String(contentsOfFile: sim + "/revoked.txt", encoding: .utf8)
        #expect(listed == "000123.abc.0456\n000124.def.0457\n000125.ghi.0458\n")
        r = try handover("simulator", "revoke", "--dir", sim)
        #expect(r.status == 2, "\(r.out)\(r.err)")
    }

    @Test("transfer says what it recorded and when the endpoints close")
    func transferSaysWhatItRecorded() throws {
        let r = try handover(
            "simulator", "transfer", "--dir", dir.sub("sim"), "--client-id", "com.example.app", "--from", "AAAA111111", "--to", "BBBB222222",
            "--accepted-at", "2026-11-02")
        #expect(
            r.status == 0
                && r.out
                    == "transfer of com.example.app from AAAA111111 to BBBB222222 accepted at 2026-11-02T00:00:00.000000Z; endpoints close 2027-01-01T00:00:00.000000Z\n",
            "\(r.out)\(r.err)")
    }

    @Test(
        "serve --seed: two runs with the same seed and users fault the same calls and revoke the same users, at any concurrency; another seed, others"
    )
    func seededFaults() throws {
        let apple = dir.sub("apple")
        for (team, key) in [("AAAA111111", "KEYA111111"), ("BBBB222222", "KEYB222222")] {
            let r = try handover("simulator", "register-team", "--dir", apple, "--team-id", team, "--client-id", "com.example.app", "--key-id", key)
            #expect(r.status == 0, "\(r.err)")
        }
        let users = dir.sub("users.csv")
        try Data(
            ("sub,account_id\n"
                + (0..<40).map { "000\($0 % 900).\(String(format: "%08x", $0 &* 2_654_435_761 & 0xFFFF_FFFF)).0001,acct-\($0)\n" }.joined()).utf8
        )
        .write(to: URL(fileURLWithPath: users))

        /// Team A's generate against a fresh stand-in seeded with `seed`: what the stand-in
        /// answered, by endpoint and outcome, and each user whose generation failed, with why.
        func run(seed: String, concurrency: Int, name: String) throws -> (answers: [String: Int], failed: [String: String]) {
            let standIn = try ServerProcess([
                "simulator", "serve", "--dir", apple, "--port", "0", "--seed", seed, "--rate-429", "0.1", "--retry-after", "0",
                "--rate-500", "0.1", "--rate-drop", "0.05", "--revoked-fraction", "0.1",
            ])
            defer { standIn.stop() }
            let ledger = dir.sub(name)
            #expect(
                try handover("init", "--ledger", ledger, "--team-id", "AAAA111111", "--client-id", "com.example.app", "--role", "sender").status == 0)
            let generated = try handover(
                "generate", "--ledger", ledger, "--users", users, "--target", "BBBB222222", "--out", dir.sub(name + ".csv"),
                "--concurrency", String(concurrency), "--team-id", "AAAA111111", "--client-id", "com.example.app", "--key-id", "KEYA111111",
                "--private-key", apple + "/keys/AuthKey_KEYA111111.p8", "--apple-base-url", standIn.baseURL)
            let stats = try runCommand("/usr/bin/env", ["curl", "-sf", standIn.baseURL + "/simulator/stats"])
            let answers = try #require(try JSONValue.parse(Array(stats.out.utf8)).objectValue, "\(stats.out)\(stats.err)").compactMapValues {
                $0.intValue.map(Int.init)
            }
            let failures = try handover("query", "failures", "--ledger", ledger, "--format", "json")
            let rows = try #require(try JSONValue.parse(Array(failures.out.utf8)).arrayValue, "\(failures.out)\(failures.err)")
            let failed = Dictionary(
                uniqueKeysWithValues: rows.compactMap { row in
                    row["sender_sub"]?.stringValue.flatMap { sub in row["last_error_class"]?.stringValue.map { (sub, $0) } }
                })
            #expect(generated.status == (failed.isEmpty ? 0 : 1), "exit 1 when users revoked consent: \(generated.out)\(generated.err)")
            return (answers, failed)
        }

        // Seeds whose token call is answered at once (a token call answered 500 makes a run
        // wait for its retry): the test is as quick as the runs.
        let first = try run(seed: "9", concurrency: 16, name: "first")
        let second = try run(seed: "9", concurrency: 4, name: "second")
        #expect(first.answers == second.answers)
        #expect(
            ["usermigrationinfo.429", "usermigrationinfo.500", "usermigrationinfo.dropped"].allSatisfy { (first.answers[$0] ?? 0) > 0 },
            "\(first.answers)")
        #expect(
            !first.failed.isEmpty && first.failed == second.failed && first.failed.values.allSatisfy { $0 == "invalid_request" },
            "\(first.failed)\n\(second.failed)")
        let other = try run(seed: "11", concurrency: 16, name: "other")
        #expect(Set(other.failed.keys) != Set(first.failed.keys) && other.answers != first.answers, "another seed faults and revokes other users")
    }
}
