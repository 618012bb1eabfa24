import Basics
import Foundation
import Ledger
import TestSupport
import Testing

/// The rows of the demo's apply batches, which hold each account's old and new relay address,
/// in the SQLite and PostgreSQL exports: sealed without `--include-personal-data`, opened with
/// it, and cleared for a user erased after they were exported.
@Suite("apply's addresses in the exports")
struct ApplyRowsExportTests {
    let dir = TemporaryDirectory()

    /// An export of the demo's team B ledger into SQLite or PostgreSQL, its `event_rows` read back.
    protocol Target {
        var out: String { get }
        var environment: [String: String] { get }
        /// The apply batches' account lines that hold an email cell: (seq, row_index, line).
        func emailLines() throws -> [(seq: Int64, index: Int64, line: String)]
    }

    struct SQLiteTarget: Target {
        let out: String
        var environment: [String: String] { [:] }
        func emailLines() throws -> [(seq: Int64, index: Int64, line: String)] {
            let r = try runCommand(
                "/usr/bin/sqlite3",
                ["-json", out, "SELECT seq, row_index, line FROM event_rows WHERE line LIKE '{\"account\":%\"email\":{%' ORDER BY seq, row_index"])
            let rows = r.out.isEmpty ? [] : (try JSONValue.parse(Array(r.out.utf8)).arrayValue ?? [])
            return rows.map { ($0["seq"]?.intValue ?? 0, $0["row_index"]?.intValue ?? 0, $0["line"]?.stringValue ?? "") }
        }
    }

    struct PostgresTarget: Target {
        let database: PostgresTestDatabase
        var out: String { database.url }
        var environment: [String: String] { database.environment }
        func emailLines() throws -> [(seq: Int64, index: Int64, line: String)] {
            try database.rows(
                "SELECT seq, row_index, line FROM event_rows WHERE line LIKE '{\"account\":%\"email\":{%' ORDER BY seq, row_index"
            ).map { ($0["seq"]?.intValue ?? 0, $0["row_index"]?.intValue ?? 0, $0["line"]?.stringValue ?? "") }
        }
    }

    @Test("SQLite: the apply rows' addresses sealed without personal data, opened with it, and cleared by the next run once the user is erased")
    func sqlite() throws {
        try scenario { name in SQLiteTarget(out: dir.sub(name + ".sqlite")) }
    }

    @Test(
        "PostgreSQL: the same, the erased user's rows rewritten in the run's transaction",
        .enabled(if: PostgresTestDatabase.isAvailable, "needs the throwaway cluster tools/test starts"))
    func postgres() throws {
        try scenario { _ in PostgresTarget(database: try PostgresTestDatabase()) }
    }

    func scenario(_ make: (String) throws -> any Target) throws {
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        let sealed = try make("sealed")
        var r = try runProduct(
            "handover", ["export", "--ledger", ledger, "--format", sealed.out.hasPrefix("postgres") ? "postgres" : "sqlite", "--out", sealed.out],
            environment: sealed.environment)
        #expect(r.status == 0, "\(r.err)")
        let lines = try sealed.emailLines()
        #expect(!lines.isEmpty, "the demo set relay addresses")
        #expect(
            lines.allSatisfy { !$0.line.contains("@") && ($0.line.contains(#""alg":"AES-256-GCM""#) || $0.line.contains(#""planned":"kept""#)) },
            "sealed, as the ledger keeps them (a kept address is not there at all)")

        let personal = try make("personal")
        let format = personal.out.hasPrefix("postgres") ? "postgres" : "sqlite"
        r = try runProduct(
            "handover", ["export", "--ledger", ledger, "--format", format, "--out", personal.out, "--include-personal-data"],
            environment: personal.environment)
        #expect(r.status == 0, "\(r.err)")
        let opened = try personal.emailLines()
        #expect(opened.count == lines.count)
        // The applied user's line: the address they took, in clear; the same line, sealed, in the other export.
        let state = try JSONValue.parse(Array(try handover("query", "state", "--ledger", ledger, "--format", "json").out.utf8)).arrayValue ?? []
        let person = try #require(state.first { $0["email_apply_outcome"]?.stringValue == "applied" && $0["erased_at"] == .null })
        let account = try #require(person["account_id"]?.stringValue)
        let address = try #require(person["email"]?.stringValue)
        let line = try #require(opened.first { $0.line.hasPrefix(#"{"account":""# + account + "\"") })
        let cell = try JSONValue.parse(Array(line.line.utf8))["email"]
        #expect(cell?["new"] == .string(address) && cell?["old"]?.stringValue?.hasSuffix("@privaterelay.appleid.com") == true, "\(line.line)")
        #expect(lines.contains { $0.seq == line.seq && $0.index == line.index && !$0.line.contains(address) })

        // Erased: the next run clears their addresses from the rows exported before.
        #expect(try handover("erase", account, "--ledger", ledger, "--reason", "test").status == 0)
        r = try runProduct(
            "handover", ["export", "--ledger", ledger, "--format", format, "--out", personal.out, "--since-last", "--include-personal-data"],
            environment: personal.environment)
        #expect(r.status == 0, "\(r.out)\(r.err)")
        let after = try personal.emailLines()
        let cleared = try #require(after.first { $0.seq == line.seq && $0.index == line.index })
        let erased = try JSONValue.parse(Array(cleared.line.utf8))["email"]
        #expect(erased?["new"] == .null && erased?["old"] == .null && !cleared.line.contains("@"), "\(cleared.line)")
        #expect(after.filter { $0.line.contains("@") }.count == opened.filter { $0.line.contains("@") }.count - 1, "only that user's row changed")
    }
}
