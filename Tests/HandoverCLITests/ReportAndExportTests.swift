import Basics
import Foundation
import TestSupport
import Testing

@testable import Ledger

/// `report` and `export` on a demo ledger, checked against the queries, the events and
/// the sqlite3 command-line tool.
@Suite("report and export on the command line")
struct ReportAndExportTests {
    let dir = TemporaryDirectory()

    /// What drops the columns schema version 4 added (the email's and the forwarding flag's outcomes).
    static let withoutEmailOutcomes = ["email_apply_outcome", "email_applied_at", "email_forwarding_apply_outcome", "email_forwarding_applied_at"]
        .map { "ALTER TABLE users DROP COLUMN \($0);" }.joined(separator: " ")

    private func json(_ args: String...) throws -> JSONValue {
        let r = try runProduct("handover", args)
        #expect(r.status == 0, "\(args): \(r.err)")
        return try JSONValue.parse(Array(r.out.utf8))
    }

    @Test("the report agrees with the queries and the events, now and as of before and after the exchange run")
    func reportAgrees() throws {
        let path = try DemoLedger.copy(.recipient, into: dir)
        let report = try json("report", "--ledger", path, "--format", "json")
        let migrated = try json("query", "migrated", "--ledger", path, "--format", "json").arrayValue ?? []
        #expect(report["migrated"]?.intValue == Int64(migrated.count))
        #expect(try json("query", "pending", "--ledger", path, "--format", "json") == report["pending"])
        #expect(try json("query", "unmatched", "--ledger", path, "--format", "json") == report["unmatched_users"])
        #expect(try json("query", "failures", "--by-class", "--ledger", path, "--format", "json") == report["failures_by_class"])

        // From the events: exchanged users, then sign-ins that linked a transfer_sub not exchanged.
        let events = try json("query", "events", "--ledger", path, "--format", "json").arrayValue ?? []
        func of(_ type: String) -> [JSONValue] { events.filter { $0["type"]?.stringValue == type } }
        let exchanged = Set(of("transfer-id-exchanged").compactMap { $0["identifiers"]?["transfer_sub"]?.stringValue })
        let signedIn = Set(of("sign-in-verified").compactMap { $0["identifiers"]?["transfer_sub"]?.stringValue }).subtracting(exchanged)
        #expect(report["migrated_by_path"]?["exchange"]?.intValue == Int64(exchanged.count))
        #expect(report["migrated_by_path"]?["sign-in"]?.intValue == Int64(signedIn.count))
        #expect(report["migrated"]?.intValue == Int64(exchanged.count + signedIn.count))
        var byType: [String: Int64] = [:]
        for n in of("notification-received") { byType[n["body"]?["notification_type"]?.stringValue ?? "", default: 0] += 1 }
        for row in report["notifications_by_type"]?.arrayValue ?? [] {
            #expect(row["received"]?.intValue == byType[row["notification_type"]?.stringValue ?? ""], "\(row)")
        }
        #expect((report["notifications_by_type"]?.arrayValue ?? []).count == byType.count)
        #expect(report["notifications_rejected"]?.intValue == Int64(of("notification-rejected").count))
        #expect(
            report["users_erased"]?.intValue == Int64(Set(of("user-erased").compactMap { $0["identifiers"]?["recipient_sub"]?.stringValue }).count))
        #expect(report["through_sequence"]?.intValue == events.last?["seq"]?.intValue)

        // As of just before the first exchange was recorded, and as of the hundredth.
        let exchangedTimes = of("transfer-id-exchanged").compactMap { $0["recorded_at"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) }
        let first = try #require(exchangedTimes.first)
        let before = Timestamp(microseconds: first.microseconds - 1).rfc3339
        let early = try json("report", "--ledger", path, "--format", "json", "--as-of", before)
        #expect(
            early["migrated"]?.intValue
                == Int64((try json("query", "migrated", "--ledger", path, "--format", "json", "--as-of", before).arrayValue ?? []).count))
        #expect(early["migrated_by_path"]?["exchange"] == nil)
        let middle = exchangedTimes[99]
        let during = try json("report", "--ledger", path, "--format", "json", "--as-of", middle.rfc3339)
        let migratedThen = try json("query", "migrated", "--ledger", path, "--format", "json", "--as-of", middle.rfc3339).arrayValue ?? []
        #expect(during["migrated"]?.intValue == Int64(migratedThen.count))
        #expect(during["migrated_by_path"]?["exchange"]?.intValue == Int64(exchangedTimes.filter { $0 <= middle }.count))
        #expect(during["historical"]?.boolValue == true)

        // The terminal report; with --html, the file and one line saying what was written where.
        let text = try handover("report", "--ledger", path)
        #expect(text.status == 0 && text.out.contains("migrated before the deadline"), "\(text.err)")
        let written = try handover("report", "--ledger", path, "--html", dir.sub("report.html"))
        let users = report["users_known"]?.intValue ?? -1
        let migratedCount = report["migrated"]?.intValue ?? -1
        let through = report["through_sequence"]?.intValue ?? -1
        #expect(written.status == 0 && written.err.isEmpty, "\(written.err)")
        #expect(
            written.out
                == "Wrote the HTML report to \(dir.sub("report.html")): \(users) users, \(migratedCount) migrated, through event \(through) of team BBBB222222's ledger.\n",
            "\(written.out)")
        let html = try String(contentsOfFile: dir.sub("report.html"), encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>") && html.contains("<svg ") && !html.contains("<script"))
        // With --format json, the JSON still on standard output and the line on standard error.
        let both = try handover("report", "--ledger", path, "--format", "json", "--html", dir.sub("again.html"))
        #expect(both.status == 0 && (try? JSONValue.parse(Array(both.out.utf8)))?["migrated"]?.intValue == migratedCount, "\(both.out)")
        #expect(both.err.hasPrefix("Wrote the HTML report to \(dir.sub("again.html")): "), "\(both.err)")
    }

    @Test("SQLite export matches query state, opens in sqlite3, adds exactly the new rows with --since-last, holds emails only when asked")
    func sqliteExport() throws {
        let path = try DemoLedger.copy(.recipient, into: dir)
        let file = dir.sub("export.sqlite")
        var r = try handover("export", "--ledger", path, "--format", "sqlite", "--out", file)
        #expect(r.status == 0, "\(r.err)")
        let state = try json("query", "state", "--ledger", path, "--format", "json").arrayValue ?? []
        let users = try sqlite(file, "SELECT * FROM users ORDER BY user_key")
        #expect(users.count == state.count)
        for (row, expected) in zip(users, state) {
            for (column, value) in expected.objectValue ?? [:] {
                let exported = row[column] ?? .null
                switch (column, value) {
                case ("email", _): #expect(exported == .null, "no email without --include-personal-data")
                case (_, .bool(let b)): #expect(exported == .int(b ? 1 : 0), "\(column)")
                default: #expect(exported == value, "\(column): \(exported) vs \(value)")
                }
            }
        }
        let head = try #require(try json("query", "events", "--ledger", path, "--format", "json", "--limit", "1").arrayValue?.first?["seq"]?.intValue)
        #expect(try sqlite(file, "SELECT count(*) AS n, max(seq) AS last FROM events").first == ["n": .int(head), "last": .int(head)])

        // A further run: 40 new users exchanged. --since-last adds exactly those events and users.
        r = try runProduct("handover-lab", ["append", "--ledger", path, "--count", "40", "--prefix", "later"])
        #expect(r.status == 0, "\(r.err)")
        r = try handover("export", "--ledger", path, "--format", "sqlite", "--out", file, "--since-last")
        #expect(r.status == 0 && r.out.contains("40 events added") && r.out.contains("40 users written"), "\(r.out)\(r.err)")
        #expect(try sqlite(file, "SELECT count(*) AS n FROM events").first?["n"] == .int(head + 40))
        #expect(try sqlite(file, "SELECT count(*) AS n FROM users").first?["n"] == .int(Int64(state.count + 40)))
        r = try handover("export", "--ledger", path, "--format", "sqlite", "--out", file, "--since-last")
        #expect(r.out.contains("0 events added"))
        #expect(try sqlite(file, "SELECT count(*) AS n FROM exports").first?["n"] == .int(3))
        #expect(try handover("export", "--ledger", path, "--format", "sqlite", "--out", file).status == 2, "an existing file needs --since-last")
        #expect(
            try handover("export", "--ledger", path, "--format", "sqlite", "--out", file, "--since-last", "--include-personal-data").status == 2,
            "one file, one personal-data policy")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(bytes.range(of: Data("@privaterelay".utf8)) == nil, "no address anywhere in the file without --include-personal-data")

        // With personal data: addresses for users with keys, none for erased users.
        let personal = dir.sub("personal.sqlite")
        r = try handover("export", "--ledger", path, "--format", "sqlite", "--out", personal, "--include-personal-data")
        #expect(r.status == 0, "\(r.err)")
        let withEmail = try sqlite(personal, "SELECT count(*) AS n FROM users WHERE email LIKE '%@%'").first?["n"]?.intValue ?? 0
        #expect(withEmail > 0)
        #expect(try sqlite(personal, "SELECT count(*) AS n FROM users WHERE erased_at IS NOT NULL AND email IS NOT NULL").first?["n"] == .int(0))
        #expect(try sqlite(personal, "SELECT count(*) AS n FROM users WHERE erased_at IS NOT NULL").first?["n"] != .int(0))
        let erasedSubs = try sqlite(personal, "SELECT recipient_sub FROM users WHERE erased_at IS NOT NULL").compactMap {
            $0["recipient_sub"]?.stringValue
        }
        for sub in erasedSubs {
            let rows = try sqlite(personal, "SELECT event_json FROM events WHERE recipient_sub = '\(sub)' AND event_json LIKE '%@%'")
            #expect(rows.isEmpty, "an erased user's address is in an exported event")
        }
    }

    @Test(
        "a SQLite export of schema version 1 is brought to this version by the next --since-last: the apply columns added, every user written again with them"
    )
    func sqliteVersion1IsUpgraded() throws {
        let path = try DemoLedger.copy(.recipient, into: dir)
        let file = dir.sub("v1.sqlite")
        #expect(try handover("export", "--ledger", path, "--format", "sqlite", "--out", file).status == 0)
        // What version 1 left: no apply_outcome, no applied_at, no event_rows.
        let downgrade =
            "ALTER TABLE users DROP COLUMN apply_outcome; ALTER TABLE users DROP COLUMN applied_at; DROP TABLE event_rows; \(Self.withoutEmailOutcomes) UPDATE export_meta SET value = '1' WHERE key = 'schema_version'"
        #expect(try runCommand("/usr/bin/sqlite3", [file, downgrade]).status == 0)
        let r = try handover("export", "--ledger", path, "--format", "sqlite", "--out", file, "--since-last")
        #expect(r.status == 0, "\(r.err)")
        #expect(try sqlite(file, "SELECT value FROM export_meta WHERE key = 'schema_version'").first?["value"] == .string("4"))
        #expect(try exportedRows("sqlite", file) == KeptRow.all(inLedgerAt: path).map(\.cells), "every kept row added")
        let state = try json("query", "state", "--ledger", path, "--format", "json").arrayValue ?? []
        let exported = try sqlite(file, "SELECT apply_outcome, applied_at FROM users ORDER BY user_key")
        #expect(exported.count == state.count)
        #expect(state.contains { $0["apply_outcome"] != .null }, "the demo applied")
        for (row, expected) in zip(exported, state) {
            #expect(row["apply_outcome"] ?? .null == expected["apply_outcome"] && row["applied_at"] ?? .null == expected["applied_at"])
        }
    }

    @Test(
        "every export holds each row the ledger keeps beside its events, exactly and once; --since-last adds a new run's; an export made before event_rows is given them all"
    )
    func keptRowsExported() throws {
        let path = try DemoLedger.copy(.recipient, into: dir)
        let app = try DemoLedger.copy(file: "app.sqlite", into: dir)
        let held = try KeptRow.all(inLedgerAt: path)
        #expect(Set(held.map(\.type)) == ["handoff-rows-received", "apply-intended", "apply-settled"], "the demo's ledger keeps each kind")
        let formats = ["sqlite": dir.sub("rows.sqlite"), "csv": dir.sub("rows-csv"), "jsonl": dir.sub("rows-jsonl")]
        for (format, out) in formats {
            let r = try handover("export", "--ledger", path, "--format", format, "--out", out)
            #expect(r.status == 0 && r.out.contains("\(held.count) kept rows added"), "\(format): \(r.out)\(r.err)")
            #expect(try exportedRows(format, out) == held.map(\.cells), "\(format)")
        }

        // An apply run again: its batches' rows are added, and only they.
        let apply = try handover(
            "apply", "--ledger", path, "--to", app, "--table", "accounts", "--key", "account_id=id", "--set", "recipient_sub=apple_sub", "--commit")
        #expect(apply.status == 0 || apply.status == 1, "\(apply.err)")
        let after = try KeptRow.all(inLedgerAt: path)
        #expect(after.count > held.count)
        for (format, out) in formats {
            let r = try handover("export", "--ledger", path, "--format", format, "--out", out, "--since-last")
            #expect(r.status == 0 && r.out.contains("\(after.count - held.count) kept rows added"), "\(format): \(r.out)\(r.err)")
            #expect(try exportedRows(format, out) == after.map(\.cells), "\(format) after --since-last")
        }

        // What an export of the schema before event_rows left; its next run adds every event's rows.
        let downgrade = "DROP TABLE event_rows; \(Self.withoutEmailOutcomes) UPDATE export_meta SET value = '2' WHERE key = 'schema_version'"
        #expect(try runCommand("/usr/bin/sqlite3", [formats["sqlite"]!, downgrade]).status == 0)
        // CSV: event_rows.csv left as it was, as the earlier version leaves a file it does not know.
        try FileManager.default.removeItem(atPath: formats["jsonl"]! + "/event_rows.jsonl")
        for format in ["csv", "jsonl"] {
            let out = formats[format]!
            var manifest = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")))).objectValue ?? [:]
            manifest["event_rows_bytes"] = nil
            manifest["schema_version"] = .int(2)
            try Data(JSONValue.object(manifest).canonicalBytes).write(to: URL(fileURLWithPath: out + "/manifest.json"))
        }
        for (format, out) in formats {
            let r = try handover("export", "--ledger", path, "--format", format, "--out", out, "--since-last")
            #expect(
                r.status == 0 && r.out.contains("0 events added") && r.out.contains("\(after.count) kept rows added"), "\(format): \(r.out)\(r.err)")
            #expect(try exportedRows(format, out) == after.map(\.cells), "\(format) upgraded")
        }
        #expect(try sqlite(formats["sqlite"]!, "SELECT value FROM export_meta WHERE key = 'schema_version'").first?["value"] == .string("4"))

        // An export of a later schema version is refused, the files left as they were.
        let manifestPath = formats["jsonl"]! + "/manifest.json"
        var manifest = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: manifestPath)))).objectValue ?? [:]
        manifest["schema_version"] = .int(5)
        try Data(JSONValue.object(manifest).canonicalBytes).write(to: URL(fileURLWithPath: manifestPath))
        let later = try handover("export", "--ledger", path, "--format", "jsonl", "--out", formats["jsonl"]!, "--since-last")
        #expect(later.status != 0 && later.err.contains("schema version 5"), "\(later.err)")
        #expect(try exportedRows("jsonl", formats["jsonl"]!) == after.map(\.cells))
    }

    /// The rows of `event_rows` in the export at `out`, in file order (SQLite: by seq and row_index).
    private func exportedRows(_ format: String, _ out: String) throws -> [[String]] {
        switch format {
        case "sqlite":
            return try sqlite(out, "SELECT seq, row_index, line FROM event_rows ORDER BY seq, row_index").map { row in
                [
                    row["seq"]?.intValue.map { String($0) } ?? "?", row["row_index"]?.intValue.map { String($0) } ?? "?",
                    row["line"]?.stringValue ?? "?",
                ]
            }
        case "jsonl":
            return try String(contentsOfFile: out + "/event_rows.jsonl", encoding: .utf8).split(separator: "\n").map { line in
                let row = try JSONValue.parse(Array(line.utf8))
                #expect(Set(row.objectValue?.keys.map { $0 } ?? []) == ["seq", "row_index", "line"])
                return [
                    row["seq"]?.intValue.map { String($0) } ?? "?", row["row_index"]?.intValue.map { String($0) } ?? "?",
                    row["line"]?.stringValue ?? "?",
                ]
            }
        default:
            // Python's csv module reads the file back: RFC 4180, CRLF line ends, quotes doubled.
            let script = "import csv, json, sys; print(json.dumps(list(csv.reader(open(sys.argv[1], newline='', encoding='utf-8')))))"
            let r = try runCommand("/usr/bin/python3", ["-c", script, out + "/event_rows.csv"])
            #expect(r.status == 0, "\(r.err)")
            let rows = (try JSONValue.parse(Array(r.out.utf8)).arrayValue ?? []).map { $0.arrayValue?.compactMap(\.stringValue) ?? [] }
            #expect(rows.first == ["seq", "row_index", "line"])
            return Array(rows.dropFirst())
        }
    }

    @Test("CSV export: --since-last after a crash mid-append neither duplicates nor skips, in events.csv and event_rows.csv")
    func csvResumes() throws {
        let path = try DemoLedger.copy(.recipient, into: dir)
        let out = dir.sub("csv")
        let exported = try handover("export", "--ledger", path, "--format", "csv", "--out", out)
        #expect(exported.status == 0, "\(exported.err)")
        _ = try runProduct("handover-lab", ["append", "--ledger", path, "--count", "25", "--prefix", "later"])
        // A crash after appending rows but before the manifest: rows the manifest does not count.
        let events = out + "/events.csv"
        for file in [events, out + "/event_rows.csv"] {
            let handle = try #require(FileHandle(forWritingAtPath: file))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("999999,half-written-row\r\n".utf8))
            try handle.close()
        }
        let r = try handover("export", "--ledger", path, "--format", "csv", "--out", out, "--since-last")
        #expect(r.status == 0 && r.out.contains("25 events added"), "\(r.out)\(r.err)")
        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\r\n").dropFirst()
        let sequences = lines.compactMap { Int($0.prefix { $0 != "," }) }
        let head = try #require(try json("query", "events", "--ledger", path, "--format", "json", "--limit", "1").arrayValue?.first?["seq"]?.intValue)
        #expect(sequences == Array(1...Int(head)), "every event once, in order")
        #expect(try exportedRows("csv", out) == KeptRow.all(inLedgerAt: path).map(\.cells), "every kept row once, in order")
        let users = try String(contentsOfFile: out + "/users.csv", encoding: .utf8).split(separator: "\r\n").count - 1
        let state = try json("query", "state", "--ledger", path, "--format", "json").arrayValue ?? []
        #expect(users == state.count)
    }

    /// Rows of a query run by the sqlite3 command-line tool, as JSON objects.
    private func sqlite(_ file: String, _ sql: String) throws -> [[String: JSONValue]] {
        let r = try runCommand("/usr/bin/sqlite3", ["-json", "-readonly", file, sql])
        #expect(r.status == 0, "sqlite3 \(sql): \(r.err)")
        guard !r.out.isEmpty else { return [] }
        return (try JSONValue.parse(Array(r.out.utf8)).arrayValue ?? []).compactMap(\.objectValue)
    }
}
