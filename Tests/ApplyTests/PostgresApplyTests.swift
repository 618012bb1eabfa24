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
    /// The app database of ``SQLiteApplyTests/appDatabase(in:)``, in PostgreSQL (the key a
    /// bigint, the forwarding flag a boolean, the email unique).
    static func appDatabase() throws -> PostgresTestDatabase {
        let database = try PostgresTestDatabase()
        _ = try database.scalar(
            "CREATE TABLE accounts (id bigint PRIMARY KEY, provider text NOT NULL, apple_sub text, email text UNIQUE, mail_ok boolean)")
        _ = try database.scalar(
            "INSERT INTO accounts SELECT i, 'apple', 'old.' || i, CASE i WHEN 2 THEN 'own.2@example.org' WHEN 4 THEN NULL "
                + "ELSE 'a' || i || '@privaterelay.appleid.com' END, NULL FROM generate_series(1, 5) AS i")
        _ = try database.scalar(
            "INSERT INTO accounts VALUES (6, 'apple', 'new.3', 'b5@privaterelay.appleid.com', NULL), (7, 'google', 'old.7', NULL, NULL)")
        return database
    }

    /// Each account's columns: id → [apple_sub, email, mail_ok] as text.
    static func rows(_ database: PostgresTestDatabase) throws -> [String: [String?]] {
        Dictionary(
            uniqueKeysWithValues: try database.rows("SELECT id::text AS id, apple_sub, email, mail_ok::text AS mail_ok FROM accounts").map {
                ($0["id"]?.stringValue ?? "", [$0["apple_sub"]?.stringValue, $0["email"]?.stringValue, $0["mail_ok"]?.stringValue])
            })
    }

    /// `body` given the table over a new connection, closed however `body` ends (a connection
    /// released open is a crash of the whole test process).
    static func withAccounts<T>(
        _ database: PostgresTestDatabase, writable: Bool, mapping: ApplyMapping? = nil, _ body: (PostgresAccounts) async throws -> T
    ) async throws -> T {
        let accounts = try await PostgresAccounts.connect(
            try PostgresTarget(url: database.url, environment: database.environment), mapping: try mapping ?? SQLiteApplyTests.mapping(),
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
        "a plan in a read-only session changes nothing and finds what SQLite's finds, column by column; a commit writes exactly the planned cells, keeps the sub and the address changed meanwhile, and its marker commits with it"
    )
    func planAndCommit() async throws {
        let database = try Self.appDatabase()
        _ = try database.scalar("UPDATE accounts SET apple_sub = 'new.4' WHERE id = 4")
        let before = try Self.rows(database)
        let items = SQLiteApplyTests.items(flags: ("true", "false"))
        let plan = try await Self.withAccounts(database, writable: false) { (reader: PostgresAccounts) async throws -> ApplyPlan in
            #expect(reader.flagText(true) == "true")
            let plan = try await ApplyPlan(items: items, table: reader)
            await #expect(throws: ApplyError.self) {
                _ = try await reader.write(plan.changes, marker: ApplyMarker(run: "r", batch: 0, intentSHA256: "00"))
            }
            return plan
        }
        #expect(SQLiteApplyTests.outcomes(plan) == SQLiteApplyTests.planned, "\(SQLiteApplyTests.outcomes(plan))")
        #expect(plan.entries.first { $0.accountID == "3" }?.cell(.recipientSub)?.holders == ["6"])
        #expect(plan.entries.first { $0.accountID == "5" }?.cell(.email)?.holders == ["6"])
        #expect(try Self.rows(database) == before, "the plan wrote nothing")

        _ = try database.scalar("UPDATE accounts SET apple_sub = 'changed.1', email = 'own.1@example.org' WHERE id = 1")
        let hostile = "x'); DROP TABLE accounts; --\u{202E}"
        try await Self.withAccounts(database, writable: true) { (writer: PostgresAccounts) async throws -> Void in
            let outcomes = try await writer.write(plan.changes, marker: ApplyMarker(run: "run-1", batch: 0, intentSHA256: "aa"))
            let byCell = Dictionary(uniqueKeysWithValues: zip(plan.changes.map { "\($0.key) \($0.column.rawValue)" }, outcomes))
            #expect(
                byCell["1 recipient_sub"] == .changedMeanwhile && byCell["1 email"] == .changedMeanwhile && byCell["1 email_forwarding"] == .applied)
            #expect(outcomes.filter { $0 == .applied }.count == 9, "\(byCell)")
            let rows = try Self.rows(database)
            #expect(rows["1"] == ["changed.1", "own.1@example.org", "true"], "\(rows)")
            #expect(rows["2"] == ["new.2", "own.2@example.org", "true"] && rows["3"] == ["old.3", "b3@privaterelay.appleid.com", "false"])
            #expect(rows["4"] == ["new.4", "b4@privaterelay.appleid.com", "true"] && rows["5"] == ["new.5", "a5@privaterelay.appleid.com", "true"])
            #expect(rows["6"] == before["6"] && rows["7"] == before["7"])
            #expect(
                try await writer.committedBatches(of: "run-1") == [ApplyMarker(run: "run-1", batch: 0, intentSHA256: "aa", outcomes: outcomes)])
            // A hostile sub reaches the table as a bound value.
            #expect(
                try await writer.write(
                    [AccountChange(key: "5", old: "new.5", new: hostile)], marker: ApplyMarker(run: "run-1", batch: 1, intentSHA256: "bb")) == [
                        .applied
                    ])
            // NULL as the old value: compare-and-set holds it.
            _ = try database.scalar("UPDATE accounts SET apple_sub = NULL WHERE id = 3")
            #expect(
                try await writer.write(
                    [AccountChange(key: "3", old: "old.3", new: "other.3")], marker: ApplyMarker(run: "run-1", batch: 2, intentSHA256: "cc"))
                    == [.changedMeanwhile])
            #expect(
                try await writer.write(
                    [AccountChange(key: "3", old: nil, new: "other.3")], marker: ApplyMarker(run: "run-1", batch: 3, intentSHA256: "dd"))
                    == [.applied])
        }
        #expect(try Self.rows(database)["5"]?[0] == hostile)
        // A column the table does not have is refused at the connection, which is closed; so is
        // a forwarding column that is not boolean.
        for set in [["recipient_sub=Apple_Sub"], ["email_forwarding=email"]] {
            await #expect(throws: ApplyError.self) {
                _ = try await PostgresAccounts.connect(
                    try PostgresTarget(url: database.url, environment: database.environment),
                    mapping: try ApplyMapping(table: "accounts", key: "account_id=id", set: set), writable: false,
                    logger: Logger(label: "apply-test"))
            }
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
