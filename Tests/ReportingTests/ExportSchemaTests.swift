import Basics
import Foundation
import Ledger
import Testing

@testable import PostgresAccess
@testable import Reporting

@Suite("export schema")
struct ExportSchemaTests {
    /// The text of `schemas/NAME`.
    private func documented(_ name: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("schemas/" + name), encoding: .utf8)
    }

    @Test("schemas/export-sqlite.sql is exactly the SQL the SQLite export runs")
    func documentedSchemaIsTheOneUsed() throws {
        #expect(try documented("export-sqlite.sql") == ExportSchema.sql)
    }

    @Test(
        "each upgrade creates event_rows with the statement a new export runs, once, where the version lacked it, and ends by adding the email's and the forwarding flag's outcome columns"
    )
    func upgradesCreateEventRows() {
        let sqlite = ExportSchema.statements(of: ExportSchema.sql).filter { $0.contains("CREATE TABLE event_rows (") }
        let sqliteLast = ExportSchema.upgradeFromVersion3
        #expect(sqlite.count == 1 && sqliteLast.count == 4 && sqliteLast.allSatisfy { $0.hasPrefix("ALTER TABLE users ADD COLUMN email_") })
        #expect(ExportSchema.upgrades.keys.sorted() == ["1", "2", "3"])
        for (version, upgrade) in ExportSchema.upgrades {
            #expect(
                upgrade.statements.filter { $0 == sqlite[0] }.count == (version == "3" ? 0 : 1) && upgrade.statements.suffix(4) == sqliteLast[...])
            #expect(upgrade.rewritesUsers && upgrade.addsAllRows == (version != "3"), "\(version)")
        }
        let postgres = PostgresExportSchema.tableStatements.filter { $0.contains("CREATE TABLE event_rows (") }
        let postgresLast = PostgresExportSchema.upgradeFromVersion4
        #expect(postgres.count == 1 && postgresLast.count == 4 && postgresLast.allSatisfy { $0.hasPrefix("ALTER TABLE users ADD COLUMN email_") })
        #expect(PostgresExportSchema.upgrades.keys.sorted() == ["1", "2", "3", "4"])
        for (version, upgrade) in PostgresExportSchema.upgrades {
            #expect(
                upgrade.statements.filter { $0 == postgres[0] }.count == (version == "4" ? 0 : 1) && upgrade.statements.suffix(4) == postgresLast[...]
            )
            #expect(upgrade.rewritesUsers && upgrade.addsAllRows == (version != "4"), "\(version)")
        }
    }

    @Test("schemas/export-postgres.sql and schemas/reporting-views.sql are exactly the SQL the PostgreSQL export runs, split into whole statements")
    func postgresSchemaIsTheOneUsed() throws {
        #expect(try documented("export-postgres.sql") == PostgresExportSchema.sql)
        #expect(try documented("reporting-views.sql") == PostgresExportSchema.viewsSQL)
        let tables = PostgresExportSchema.tableStatements
        let indexes = PostgresExportSchema.indexStatements
        #expect(
            tables.map { $0.split(separator: " ").prefix(3).joined(separator: " ") } == [
                "CREATE TABLE export_meta", "CREATE TABLE exports", "CREATE TABLE events", "CREATE TABLE users", "CREATE TABLE event_rows",
            ])
        #expect(indexes.count == 13 && indexes.allSatisfy { $0.hasPrefix("CREATE INDEX") && $0.hasSuffix(";") && !$0.contains("\n") })
        // Version 3 drops the two views whose columns it renamed, then makes every view.
        let views = PostgresExportSchema.viewStatements
        #expect(views.first == "DROP VIEW IF EXISTS report_failures_by_class, report_migrated_by_path;")
        #expect(views.count == 11 && views.dropFirst().allSatisfy { $0.hasPrefix("CREATE OR REPLACE VIEW") })
    }

    @Test("COPY text escapes backslash, tab, newline and carriage return, and writes null as \\N; exact_text is null when nothing changed")
    func copyText() {
        var rows = CopyTextRows(capacity: 64)
        rows.append([.text("a\\b\tc\nd\re"), .text(nil), .int(42), .bool(true), .bool(nil), .text("")], columns: ["a", "b", "c", "d", "e", "f"])
        rows.append(7, eventJSON: Array(#"{"k":"x\ny"}"#.utf8))
        let (buffer, count) = rows.take()
        #expect(count == 2)
        #expect(String(buffer: buffer) == "a\\\\b\\tc\\nd\\re\t\\N\t42\tt\t\\N\t\t\\N\n7\t{\"k\":\"x\\\\ny\"}\t\\N\n")
        #expect(rows.rows == 0 && rows.buffer.readableBytes == 0)
    }

    @Test("U+0000, which PostgreSQL refuses, is U+FFFD in the column and exact in exact_text; an escaped backslash before u0000 is left alone")
    func nulForPostgres() throws {
        var rows = CopyTextRows(capacity: 64)
        let event = #"{"body":{"detail":"K\u0000ID","path":"C:\\u0000x"}}"#
        rows.append([.text("err\u{0}or\u{1B}"), .text(event), .text("plain")], columns: ["last_error", "event_json", "other"], jsonColumn: 1)
        let line = String(buffer: rows.take().buffer)
        let fields = line.dropLast().split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        #expect(fields.count == 4)
        #expect(fields[0] == "err\u{FFFD}or\u{1B}")
        // COPY's text format doubles each backslash of the value.
        #expect(fields[1] == #"{"body":{"detail":"K\\ufffdID","path":"C:\\\\u0000x"}}"#)
        #expect(fields[2] == "plain")
        let exact = try JSONValue.parse(Array(fields[3].replacingOccurrences(of: "\\\\", with: "\\").utf8))
        #expect(exact.objectValue?["last_error"] == .string("err\u{0}or\u{1B}"))
        #expect(exact.objectValue?["event_json"] == (try JSONValue.parse(Array(event.utf8))))
        #expect(!fields[3].utf8.contains(0) && !fields[3].utf8.contains(0x1B), "exact_text is JSON with escapes")
    }

    @Test("a COPY error's context names the line PostgreSQL refused")
    func copyLine() {
        #expect(PostgresFailure.copyLine(in: "COPY events, line 17, column event_json: \"{...}\"") == 17)
        #expect(PostgresFailure.copyLine(in: "COPY users_incoming, line 3") == 3)
        #expect(PostgresFailure.copyLine(in: "SQL statement") == nil)
    }

    @Test("a postgres URL: its parts, the password from the URL, PGPASSWORD or a password file, masked in every rendering")
    func targets() throws {
        let full = try PostgresTarget(
            url: "postgresql://rep%40orts:s3cr%3At@db.example:6432/mig?sslmode=require&application_name=dash", environment: [:])
        #expect(full.user == "rep@orts" && full.host == "db.example" && full.port == 6432 && full.database == "mig")
        #expect(full.sslMode == .require && full.applicationName == "dash" && full.passwordSource == "url" && full.connectTimeout == 10)
        #expect(try PostgresTarget(url: "postgres://a@b/c?connect_timeout=3", environment: [:]).connectTimeout == 3)
        #expect(full.masked == "postgres://rep@orts:***@db.example:6432/mig?sslmode=require")
        #expect(!full.masked.contains("s3cr") && full.redacting("failed for s3cr:t here") == "failed for *** here")

        let bare = try PostgresTarget(url: "postgres://alice@[::1]/", environment: ["PGPASSWORD": "pw1"])
        #expect(bare.host == "::1" && bare.port == 5432 && bare.database == "alice" && bare.sslMode == .prefer && bare.passwordSource == "PGPASSWORD")
        #expect(bare.masked == "postgres://alice:***@[::1]:5432/alice")

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pgpass-\(UUID().uuidString)").path
        try "# a comment\nother:5432:*:alice:no\ndb:5432:mig:alice:pa\\:ss\n*:*:*:*:fallback\n".write(toFile: dir, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        chmod(dir, 0o600)
        let fromFile = try PostgresTarget(url: "postgres://alice@db/mig", environment: ["PGPASSFILE": dir])
        #expect(fromFile.password == "pa:ss" && fromFile.passwordSource == dir)
        #expect(try PostgresTarget(url: "postgres://bob@elsewhere/x", environment: ["PGPASSFILE": dir]).password == "fallback")
        chmod(dir, 0o640)
        #expect(throws: PostgresTargetError.self) { try PostgresTarget(url: "postgres://alice@db/mig", environment: ["PGPASSFILE": dir]) }

        for bad in [
            "mysql://a@b/c", "postgres://a@b/c?sslmode=sometimes", "postgres://a@b/c?target_session_attrs=any", "postgres://a@b:99999/c",
            "postgres://b/c",
        ] {
            #expect(throws: PostgresTargetError.self, "\(bad)") { try PostgresTarget(url: bad, environment: [:]) }
        }
    }
}
