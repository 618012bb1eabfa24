import Foundation
import Ledger
import Testing
import TestSupport

/// `export --format postgres --follow` as a reporting service runs it: beside a real exchange
/// against the stand-in, into the cluster `tools/test` starts.
@Suite("export --follow beside an exchange", .serialized, .enabled(if: PostgresTestDatabase.isAvailable, "needs the cluster tools/test starts (HANDOVER_TEST_POSTGRES_DIR)"))
struct FollowExportTests {
    @Test("--follow beside an exchange of 5,000 users: every exchanged user in PostgreSQL within --interval + 2 s of the exchange ending; a second exporter is turned away; SIGTERM ends it with 0")
    func followBesideExchange() throws {
        let teams = try TwoTeamsOnTheCommandLine(users: 5_000, latencyMilliseconds: 0)
        let db = try PostgresTestDatabase()
        let interval = 1.0
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: productPath("handover"))
        follower.arguments = ["export", "--ledger", teams.recipient, "--format", "postgres", "--out", db.url, "--follow", "--interval", String(interval)]
        follower.environment = ProcessInfo.processInfo.environment.merging(db.environment) { $1 }
        let out = Pipe(), err = Pipe()
        follower.standardOutput = out
        follower.standardError = err
        try follower.run()
        defer { if follower.isRunning { kill(follower.processIdentifier, SIGKILL) } }

        // The first run (the ledger as the generation left it) creates the tables.
        let ready = Date()
        while (try? db.scalar("SELECT count(*) FROM exports")) ?? "0" == "0", follower.isRunning, Date().timeIntervalSince(ready) < 120 { usleep(100_000) }
        try #require(follower.isRunning, "the follower ended early")

        // A second exporter into the same database is turned away while the first runs.
        let second = try runProduct("handover", ["export", "--ledger", teams.recipient, "--format", "postgres", "--out", db.url, "--since-last"], environment: db.environment)
        #expect(second.status == 1 && second.err.contains("another exporter"), "\(second.status): \(second.err)")

        let exchange = try teams.startExchange(concurrency: 32)
        exchange.waitUntilExit()
        let ended = Date()
        try #require(exchange.terminationStatus == 0)
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
        let seen = try #require(lag, "PostgreSQL never held all \(exchanged) exchanged users")
        #expect(seen <= interval + 2, "all exchanged users in PostgreSQL \(seen) s after the exchange ended")
        print("follow: every exchanged user in PostgreSQL \(String(format: "%.2f", seen)) s after the exchange ended (--interval \(interval))")

        kill(follower.processIdentifier, SIGTERM)
        follower.waitUntilExit()
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(follower.terminationReason == .exit && follower.terminationStatus == 0, "\(errors)")
        #expect(printed.contains("Stopped following; everything through sequence"), "\(printed)")
        #expect(!printed.contains(db.password) && !errors.contains(db.password))
        let head = try #require(UInt64(try db.scalar("SELECT value FROM export_meta WHERE key = 'last_sequence'")))
        #expect(try db.scalar("SELECT count(*) || ' ' || max(seq) FROM events") == "\(head) \(head)")
    }
}
