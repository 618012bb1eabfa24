import Apply
import Foundation
import Ledger
import Logging
import PostgresAccess
import Projections
import Reporting
import TestSupport
import Testing

/// The same plan and commit as on SQLite, against a PostgreSQL database of the tests' cluster.
@Suite("apply to a PostgreSQL accounts table", .enabled(if: PostgresTestDatabase.isAvailable, "needs the throwaway cluster tools/test starts"))
struct PostgresApplyTests {
    /// The app database of ``SQLiteApplyTests/appDatabase(in:)``, in PostgreSQL (the key a bigint).
    static func appDatabase() throws -> PostgresTestDatabase {
        let database = try PostgresTestDatabase()
        _ = try database.scalar("CREATE TABLE accounts (id bigint PRIMARY KEY, provider text NOT NULL, apple_sub text)")
        _ = try database.scalar("INSERT INTO accounts SELECT i, 'apple', 'old.' || i FROM generate_series(1, 5) AS i")
        _ = try database.scalar("INSERT INTO accounts VALUES (6, 'apple', 'new.3'), (7, 'google', 'old.7')")
        return database
    }

    static func values(_ database: PostgresTestDatabase) throws -> [String: String?] {
        Dictionary(
            uniqueKeysWithValues: try database.rows("SELECT id::text AS id, apple_sub FROM accounts").map {
                ($0["id"]?.stringValue ?? "", $0["apple_sub"]?.stringValue)
            })
    }

    /// `body` given the table over a new connection, closed however `body` ends (a connection
    /// released open is a crash of the whole test process).
    static func withAccounts<T>(_ database: PostgresTestDatabase, writable: Bool, _ body: (PostgresAccounts) async throws -> T) async throws -> T {
        let accounts = try await PostgresAccounts.connect(
            try PostgresTarget(url: database.url, environment: database.environment), mapping: try SQLiteApplyTests.mapping(),
            writable: writable, logger: Logger(label: "apply-test"))
        do {
            let result = try await body(accounts)
            await accounts.close()
            return result
        } catch {
            await accounts.close()
            throw error
        }
    }

    @Test(
        "a plan in a read-only session changes nothing and finds what SQLite's finds; a commit writes exactly the planned rows, keeps the row changed meanwhile, and its marker commits with it"
    )
    func planAndCommit() async throws {
        let database = try Self.appDatabase()
        _ = try database.scalar("UPDATE accounts SET apple_sub = 'new.4' WHERE id = 4")
        let before = try Self.values(database)
        let plan = try await Self.withAccounts(database, writable: false) { (reader: PostgresAccounts) async throws -> ApplyPlan in
            let plan = try await ApplyPlan(users: SQLiteApplyTests.users, table: reader)
            await #expect(throws: ApplyError.self) {
                _ = try await reader.write(plan.changes, marker: ApplyMarker(run: "r", batch: 0, intentSHA256: "00"))
            }
            return plan
        }
        let outcomes = Dictionary(uniqueKeysWithValues: plan.entries.map { ($0.accountID, $0.outcome) })
        #expect(outcomes == ["1": .change, "2": .change, "3": .collision, "4": .already, "7": .noAccount, "9": .noAccount], "\(outcomes)")
        #expect(plan.entries.first { $0.accountID == "3" }?.holders == ["6"])
        #expect(try Self.values(database) == before, "the plan wrote nothing")

        _ = try database.scalar("UPDATE accounts SET apple_sub = 'changed.2' WHERE id = 2")
        let hostile = "x'); DROP TABLE accounts; --\u{202E}"
        try await Self.withAccounts(database, writable: true) { (writer: PostgresAccounts) async throws -> Void in
            #expect(
                try await writer.write(plan.changes, marker: ApplyMarker(run: "run-1", batch: 0, intentSHA256: "aa")) == [
                    .applied, .changedMeanwhile,
                ])
            #expect(
                try Self.values(database) == ["1": "new.1", "2": "changed.2", "3": "old.3", "4": "new.4", "5": "old.5", "6": "new.3", "7": "old.7"])
            #expect(
                try await writer.committedBatches(of: "run-1") == [
                    ApplyMarker(run: "run-1", batch: 0, intentSHA256: "aa", outcomes: [.applied, .changedMeanwhile])
                ])
            // A hostile sub reaches the table as a bound value.
            #expect(
                try await writer.write(
                    [AccountChange(key: "5", old: "old.5", new: hostile)], marker: ApplyMarker(run: "run-1", batch: 1, intentSHA256: "bb")) == [
                        .applied
                    ])
            // NULL as the old value: compare-and-set holds it.
            _ = try database.scalar("UPDATE accounts SET apple_sub = NULL WHERE id = 3")
            #expect(
                try await writer.write(
                    [AccountChange(key: "3", old: "old.3", new: "other.3"), AccountChange(key: "3", old: nil, new: "other.3")],
                    marker: ApplyMarker(run: "run-1", batch: 2, intentSHA256: "cc")) == [.changedMeanwhile, .applied])
        }
        #expect(try Self.values(database)["5"] == hostile)
        // A column the table does not have is refused at the connection, which is closed.
        await #expect(throws: ApplyError.self) {
            _ = try await PostgresAccounts.connect(
                try PostgresTarget(url: database.url, environment: database.environment),
                mapping: try ApplyMapping(table: "accounts", key: "account_id=id", set: "recipient_sub=Apple_Sub"), writable: false,
                logger: Logger(label: "apply-test"))
        }
    }

    @Test(
        "handover apply to PostgreSQL with the password in the URL: the accounts take their new sub, the marker table is made, and the password is in no output and no byte of the ledger"
    )
    func commandKeepsThePassword() throws {
        let database = try PostgresTestDatabase()
        let dir = TemporaryDirectory()
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        var values: [String] = []
        for file in ["users.csv", "users-late.csv"] {
            let text = try String(contentsOfFile: try DemoLedger.copy(file: file, into: dir), encoding: .utf8)
            for line in text.split(whereSeparator: \.isNewline).dropFirst() {
                let fields = line.split(separator: ",").map(String.init)
                values.append("('\(fields[1])', '\(fields[0])')")
            }
        }
        _ = try database.scalar("CREATE TABLE accounts (id text PRIMARY KEY, apple_sub text)")
        _ = try database.scalar("INSERT INTO accounts VALUES " + values.joined(separator: ", ") + " ON CONFLICT DO NOTHING")
        let url = database.url.replacingOccurrences(of: "@", with: ":\(database.password)@")
        let options = ["apply", "--ledger", ledger, "--to", url, "--table", "accounts", "--key", "account_id=id", "--set", "recipient_sub=apple_sub"]
        let plan = try runProduct("handover", options, unsetting: ["PGPASSWORD"])
        let commit = try runProduct("handover", options + ["--commit", "--batch-size", "50"], unsetting: ["PGPASSWORD"])
        #expect(commit.status == 0, "\(commit.out)\(commit.err)")
        for r in [plan, commit] {
            #expect(!r.out.contains(database.password) && !r.err.contains(database.password), "the password is never printed")
        }
        #expect(try !filesContain(ledger, database.password), "nor recorded")
        let started = try runProduct("handover", ["query", "events", "--type", "apply-started", "--ledger", ledger, "--format", "json"])
        #expect(started.out.contains("postgres://") && !started.out.contains("@"), "the ledger names the database without its user: \(started.out)")
        let migrated = try database.scalar("SELECT count(*) FROM accounts WHERE apple_sub LIKE '001%'")
        let applied = try database.scalar("SELECT coalesce(sum(applied), 0) FROM handover_apply")
        #expect(Int(migrated) == Int(applied) && Int(applied)! > 250, "every account the markers count took its new sub: \(migrated), \(applied)")

        // Again: nothing new. Undone: every value as it was.
        let before = try database.scalar("SELECT count(*) FROM handover_apply")
        let again = try runProduct("handover", options + ["--commit"], environment: database.environment)
        #expect(again.status == 0 && again.out.contains("Nothing new"), "\(again.out)\(again.err)")
        #expect(try database.scalar("SELECT count(*) FROM handover_apply") == before)
        let runID = try #require(commit.out.split(separator: " ").dropFirst(2).first.map(String.init))
        let undo = try runProduct("handover", options + ["--undo", runID, "--commit"], environment: database.environment)
        #expect(undo.status == 0 && undo.out.contains("undone \(applied)."), "\(undo.out)\(undo.err)")
        #expect(try database.scalar("SELECT count(*) FROM accounts WHERE apple_sub LIKE '001%'") == "0", "every old value restored")
    }
}
