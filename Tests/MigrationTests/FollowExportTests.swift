import Foundation
import Ledger
import TestSupport
import Testing

/// `export --format postgres --follow` as a reporting service runs it: beside a real exchange
/// against the stand-in, into the cluster `tools/test` starts.
@Suite(
    "export --follow beside an exchange", .serialized,
    .enabled(if: PostgresTestDatabase.isAvailable, "needs the cluster tools/test starts (HANDOVER_TEST_POSTGRES_DIR)"))
struct FollowExportTests {
    @Test(
        "--follow waits out a server that is down and catches up when it is back; a row PostgreSQL refuses for good ends it, non-zero and naming the sequence, with nothing of the refused run committed"
    )
    func outageAndRefusal() throws {
        // A cluster of this test's own, to stop and start without disturbing the others.
        let dir = TemporaryDirectory()
        let cluster = dir.sub("cluster")
        let pgCluster = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("tools/pg-cluster").path
        func pg(_ command: String) throws {
            let r = try runCommand(pgCluster, [command, cluster])
            try #require(r.status == 0, "pg-cluster \(command): \(r.err)")
        }
        try pg("start")
        defer { _ = try? runCommand(pgCluster, ["stop", cluster]) }
        let url = try String(contentsOfFile: cluster + "/url", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let environment = [
            "PGPASSWORD": try String(contentsOfFile: cluster + "/password", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        ]
        let ledger = dir.sub("ledger")
        func append(_ count: Int, _ prefix: String, create: Bool = false) throws {
            let r = try runProduct(
                "handover-lab", ["append", "--ledger", ledger, "--count", String(count), "--prefix", prefix] + (create ? ["--create"] : []))
            try #require(r.status == 0, "\(r.err)")
        }
        func mark() -> String {
            (try? PostgresTestDatabase.psql(url, password: environment["PGPASSWORD"]!, "SELECT value FROM export_meta WHERE key = 'last_sequence'"))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        }
        func head() throws -> UInt64 {
            let l = try Ledger.open(at: ledger)
            defer { l.close() }
            return try l.read { try $0.head().sequence }
        }
        func waitForMark(_ sequence: UInt64, within seconds: Double) -> Bool {
            let start = Date()
            while Date().timeIntervalSince(start) < seconds {
                if mark() == String(sequence) { return true }
                usleep(100_000)
            }
            return false
        }
        try append(500, "first", create: true)
        let interval = 1.0
        let follower = try RunningProduct(
            "handover", ["export", "--ledger", ledger, "--format", "postgres", "--out", url, "--follow", "--interval", String(interval)],
            environment: environment)
        #expect(waitForMark(try head(), within: 60), "the first export")

        // The server goes away; events keep coming; the follower waits, then catches up.
        try pg("stop")
        try append(300, "during-outage")
        usleep(UInt32(3 * interval * 1_000_000))
        #expect(follower.isRunning, "an outage does not end --follow")
        try pg("start")
        #expect(waitForMark(try head(), within: 60), "caught up once the server is back")

        // A row refused for good: a check that the next events' third breaks.
        let refused = try head() + 3
        try PostgresTestDatabase.psql(
            url, password: environment["PGPASSWORD"]!, "ALTER TABLE events ADD CONSTRAINT refuse_one CHECK (seq <> \(refused)) NOT VALID")
        try append(20, "refused")
        // It ends by itself; the deadline only catches a hang (how soon it ends is printed below).
        let appended = Date()
        while follower.isRunning && Date().timeIntervalSince(appended) < 120 { usleep(20_000) }
        let took = Date().timeIntervalSince(appended)
        #expect(!follower.isRunning, "--follow still running \(took) s after a row PostgreSQL refuses for good")
        follower.signal(SIGKILL)
        let ended = follower.wait()
        let errors = ended.err
        #expect(!ended.signalled && ended.status == 1, "\(errors)")
        #expect(errors.contains("sequence \(refused)") && errors.contains("SQLSTATE 23514") && errors.contains("following stops"), "\(errors)")
        #expect(errors.contains("trying again"), "the outage was reported and retried: \(errors)")
        #expect(mark() == String(refused - 3), "nothing of the refused run was committed")
        print(
            "follow: the refusal ended --follow \(String(format: "%.2f", took)) s after its row was recorded (--interval \(interval)): \(errors.split(separator: "\n").last ?? "")"
        )
    }

    @Test(
        "--follow beside an exchange of 5,000 users: every exchanged user reaches PostgreSQL while it follows, over several exports; a second exporter is turned away; SIGTERM ends it with 0"
    )
    func followBesideExchange() throws {
        let teams = try TwoTeamsOnTheCommandLine(users: 5_000, latencyMilliseconds: 0)
        let db = try PostgresTestDatabase()
        let interval = 1.0
        let follower = try RunningProduct(
            "handover", ["export", "--ledger", teams.recipient, "--format", "postgres", "--out", db.url, "--follow", "--interval", String(interval)],
            environment: db.environment)

        // The first run (the ledger as the generation left it) creates the tables.
        let ready = Date()
        while (try? db.scalar("SELECT count(*) FROM exports")) ?? "0" == "0", follower.isRunning, Date().timeIntervalSince(ready) < 120 {
            usleep(100_000)
        }
        try #require(follower.isRunning, "the follower ended early")

        // A second exporter into the same database is turned away while the first runs.
        let second = try runProduct(
            "handover", ["export", "--ledger", teams.recipient, "--format", "postgres", "--out", db.url, "--since-last", "--lock-wait", "1"],
            environment: db.environment)
        #expect(
            second.status == 1 && second.err.contains("another exporter") && second.err.contains("still did after 1 s"),
            "\(second.status): \(second.err)")

        let exchange = try teams.startExchange(concurrency: 32)
        let exchangeRun = exchange.wait()
        let ended = Date()
        try #require(exchangeRun.status == 0, "\(exchangeRun.err)")
        let ledger = try Ledger.open(at: teams.recipient)
        let exchanged = try ledger.read { view in try view.sequences(of: .transferIDExchanged).count }
        ledger.close()
        try #require(exchanged == 5_000)

        var lag: Double?
        while Date().timeIntervalSince(ended) < 120 {
            if try db.scalar("SELECT count(*) FROM users WHERE status = 'migrated' AND migrated_via = 'exchange'") == String(exchanged) {
                lag = Date().timeIntervalSince(ended)
                break
            }
            usleep(50_000)
        }
        // How soon is printed, not asserted: it follows the machine's speed. What must hold is
        // that the follower, still running, brought every user over, in more than one export.
        let seen = try #require(lag, "PostgreSQL never held all \(exchanged) exchanged users while --follow ran")
        #expect(follower.isRunning, "the follower still follows")
        #expect((Int(try db.scalar("SELECT count(*) FROM exports")) ?? 0) > 2, "the exchange's users came over in several exports")
        print("follow: every exchanged user in PostgreSQL \(String(format: "%.2f", seen)) s after the exchange ended (--interval \(interval))")

        follower.signal(SIGTERM)
        let (status, signalled, printed, errors) = follower.wait()
        #expect(!signalled && status == 0, "\(errors)")
        #expect(printed.contains("Stopped following; everything through sequence"), "\(printed)")
        #expect(!printed.contains(db.password) && !errors.contains(db.password))
        let head = try #require(UInt64(try db.scalar("SELECT value FROM export_meta WHERE key = 'last_sequence'")))
        #expect(try db.scalar("SELECT count(*) || ' ' || max(seq) FROM events") == "\(head) \(head)")
    }
}
