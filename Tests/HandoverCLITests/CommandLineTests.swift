import Basics
import Foundation
import TestSupport
import Testing

@testable import Ledger

/// The `handover` executable as a user runs it: arguments, output formats, exit codes.
@Suite("handover command line")
struct CommandLineTests {
    let dir = TemporaryDirectory()

    @Test("init creates a ledger, refuses to overwrite it, and bad arguments exit 2")
    func initLedger() throws {
        let path = dir.sub("l")
        var r = try handover("init", "--ledger", path, "--team-id", "BBBB222222", "--client-id", "com.example.app", "--role", "recipient")
        #expect(r.status == 0, "\(r.err)")
        r = try handover("init", "--ledger", path, "--team-id", "BBBB222222", "--client-id", "com.example.app", "--role", "recipient")
        #expect(r.status == 2 && r.err.contains("already holds a ledger"), "\(r.err)")
        r = try handover("init", "--ledger", dir.sub("m"), "--team-id", "short", "--client-id", "c", "--role", "sender")
        #expect(r.status == 2 && r.err.contains("--team-id"), "\(r.err)")
        r = try runProduct("handover", ["query", "state"], environment: ["HANDOVER_LEDGER": path])
        #expect(r.status == 0 && r.out.contains("(no rows)"), "\(r.out)\(r.err)")
    }

    @Test(
        "a ledger path that is wrong: exit 2, saying what is there and which ledger is near (beside it, the one whose data file it is, the one it is inside, $HANDOVER_LEDGER's); only init makes one"
    )
    func missingLedger() throws {
        let far = dir.sub("far/absent")
        var r = try handover("query", "pending", "--ledger", far)
        #expect(
            r.status == 2
                && r.err
                    == "error: no Handover ledger at \(far) (it does not exist). Give the ledger's directory with --ledger; only `handover init` makes a new one\n",
            "\(r.err)")
        _ = FileManager.default.createFile(atPath: dir.sub("notes.txt"), contents: Data("x".utf8))
        r = try handover("verify", "--ledger", dir.path)
        #expect(r.status == 2 && r.err.hasPrefix("error: no Handover ledger at \(dir.path) (the directory holds no ledger)."), "\(r.err)")

        let b = dir.sub("ledger-b")
        #expect(try handover("init", "--ledger", b, "--team-id", "BBBB222222", "--client-id", "com.example.app", "--role", "recipient").status == 0)
        let near = "Did you mean --ledger \(b) (team BBBB222222)?\n"
        r = try handover("status", "--ledger", dir.sub("ledger-c"))
        #expect(r.status == 2 && r.err == "error: no Handover ledger at \(dir.sub("ledger-c")) (it does not exist). \(near)", "\(r.err)")
        r = try handover("status", "--ledger", b + "/data.mdb")
        #expect(
            r.err
                == "error: no Handover ledger at \(b)/data.mdb (it is the data file of the ledger \(b), and a ledger is named by its directory). \(near)",
            "\(r.err)")
        r = try handover("status", "--ledger", b + "/keys")
        #expect(r.err == "error: no Handover ledger at \(b)/keys (the directory holds no ledger; it is inside the ledger \(b)). \(near)", "\(r.err)")
        r = try runProduct("handover", ["status", "--ledger", "/nowhere/at/all"], environment: ["HANDOVER_LEDGER": b])
        #expect(r.err.hasSuffix("Did you mean --ledger \(b) (team BBBB222222)?\n"), "\(r.err)")
        // No --ledger and no $HANDOVER_LEDGER: the default, said as such.
        r = try runCommand(
            productPath("handover"), ["status"], unsetting: ["HANDOVER_LEDGER"])
        #expect(
            r.status == 2
                && r.err.contains("no --ledger was given and $HANDOVER_LEDGER is not set, so the default ./handover-ledger was tried"),
            "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: dir.sub("ledger-c")) && !FileManager.default.fileExists(atPath: "./handover-ledger"))
    }

    @Test("window records the acceptance date and shows the deadline")
    func window() throws {
        let path = dir.sub("l")
        _ = try handover("init", "--ledger", path, "--team-id", "AAAA111111", "--client-id", "com.example.app", "--role", "sender")
        var r = try handover("window", "--ledger", path, "--accepted-at", "2026-11-01", "--format", "json")
        #expect(r.status == 0, "\(r.err)")
        let rows = try #require(try JSONValue.parse(Array(r.out.utf8)).arrayValue)
        #expect(rows.first?["deadline"] == .string("2026-12-31T00:00:00.000000Z"))
        r = try handover("window", "--ledger", path, "--accepted-at", "2026-11-05")
        #expect(r.status == 2 && r.err.contains("--correct"), "\(r.err)")
        r = try handover("window", "--ledger", path, "--accepted-at", "not-a-date")
        #expect(r.status == 2, "\(r.err)")
    }

    @Test("queries answer in table, JSON and CSV, and --as-of changes the answer")
    func queries() throws {
        let path = try DemoLedger.copy(.recipient, into: dir)
        let state = try handover("query", "state", "--ledger", path, "--format", "json")
        #expect(state.status == 0, "\(state.err)")
        let users = try #require(try JSONValue.parse(Array(state.out.utf8)).arrayValue)
        #expect(users.count > 250)
        let migrated = try handover("query", "migrated", "--ledger", path, "--format", "csv")
        let csvLines = migrated.out.split(separator: "\r\n")
        #expect(csvLines.first == "account_id,sender_sub,transfer_sub,recipient_sub,migrated_at,migrated_recorded_at,migrated_via,before_deadline")
        #expect(csvLines.count > 250)
        let someone = try #require(users.first { $0["status"] == .string("migrated") && $0["account_id"] != nil })
        let account = try #require(someone["account_id"]?.stringValue)
        let one = try handover("query", "user", account, "--ledger", path)
        #expect(one.status == 0 && one.out.contains("History:") && one.out.contains("transfer-id-exchanged"), "\(one.out)\(one.err)")
        let past = try handover("query", "state", "--ledger", path, "--as-of", "2000-01-01", "--format", "json")
        #expect(past.out == "[]\n")
        let unknown = try handover("query", "user", "nobody-at-all", "--ledger", path)
        #expect(unknown.status == 1, "\(unknown.err)")
        let events = try handover("query", "events", "--ledger", path, "--type", "user-erased", "--format", "json")
        #expect(try JSONValue.parse(Array(events.out.utf8)).arrayValue?.isEmpty == false)
        // The demo's stand-in is seeded: the same users revoke consent in every run, some on team B's side.
        let failures = try handover("query", "failures", "--by-class", "--ledger", path)
        #expect(failures.status == 0 && failures.out.contains("last_error_class") && failures.out.contains("invalid_request"), "\(failures.out)")
        let noSuchType = try handover("query", "events", "--type", "no-such-type", "--ledger", path)
        #expect(noSuchType.status == 2, "\(noSuchType.err)")
    }

    @Test("verify exits 4 naming the sequence number of a flipped byte")
    func verifyFindsTampering() throws {
        let path = try DemoLedger.copy(.recipient, into: dir)
        let verified = try handover("verify", "--ledger", path)
        #expect(verified.status == 0, "\(verified.err)")
        let target = try handover("query", "events", "--ledger", path, "--type", "run-finished", "--format", "json")
        let seq = try #require(try JSONValue.parse(Array(target.out.utf8)).arrayValue?.first?["seq"]?.intValue)
        try flipByte(in: path, inRecordContaining: "\"seq\":\(seq),")
        let r = try handover("verify", "--ledger", path)
        #expect(r.status == 4, "\(r.err)")
        #expect(r.err.contains("sequence \(seq)"), "\(r.err)")
    }

    @Test("erase removes the plaintext email and verify stays green; rebuild agrees")
    func erase() throws {
        let path = try DemoLedger.copy(.recipient, into: dir)
        let state = try JSONValue.parse(Array(try handover("query", "state", "--ledger", path, "--format", "json").out.utf8)).arrayValue ?? []
        let user = try #require(state.first { ($0["email"]?.stringValue ?? "").contains("@") && $0["erased_at"] == .null })
        let email = try #require(user["email"]?.stringValue)
        let sub = try #require(user["recipient_sub"]?.stringValue)
        #expect(try !filesContain(path, email))
        let r = try handover("erase", sub, "--ledger", path)
        #expect(r.status == 0, "\(r.err)")
        let shown = try handover("query", "user", sub, "--ledger", path, "--format", "json")
        #expect(try JSONValue.parse(Array(shown.out.utf8))["email"] == .string("(erased)"))
        let verified = try handover("verify", "--ledger", path)
        #expect(verified.status == 0, "\(verified.err)")
        let before = try handover("query", "state", "--ledger", path, "--format", "json").out
        let rebuilt = try handover("projections", "rebuild", "--ledger", path)
        #expect(rebuilt.status == 0, "\(rebuilt.err)")
        #expect(try handover("query", "state", "--ledger", path, "--format", "json").out == before)
    }
}
