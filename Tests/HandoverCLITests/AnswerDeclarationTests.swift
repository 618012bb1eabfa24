import Basics
import Foundation
import Ledger
import Migration
import Projections
import Reporting
import TestSupport
import Testing

/// Every answer, report table, run output and export table is written from one declaration of
/// its columns; these tests hold every output, the export schemas and the column reference to
/// those declarations.
@Suite("answers written from their declarations")
struct AnswerDeclarationTests {
    let dir = TemporaryDirectory()

    /// Every declared answer.
    static let catalogue =
        Answers.all + MigrationReport.answers + ExportAnswers.all
        + [
            MigrationOutputRow.generation.description, MigrationOutputRow.exchange.description, ReconcileTotal.answer.description,
            ReconcileRow.answer.description,
        ]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// What `handover` with `args` prints on standard output; it is expected to exit 0.
    private func output(_ args: [String]) throws -> String {
        let r = try handover(args)
        #expect(r.status == 0, "handover \(args.joined(separator: " ")) exited \(r.status): \(r.err)")
        return r.out
    }

    private func python(_ script: String, _ arguments: [String] = [], input: Data? = nil) throws -> String {
        let r = try runCommand("/usr/bin/python3", ["-c", script] + arguments, input: input)
        #expect(r.status == 0, "python: \(r.err)")
        return r.out
    }

    /// The header of a table-format answer: its column names.
    private func tableHeader(_ text: String) -> [String] {
        (text.split(separator: "\n").first ?? "").split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    }

    private func csvHeader(_ text: String) -> [String] {
        (text.split(separator: "\r\n").first ?? "").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }

    /// The keys of each object of a JSON array.
    private func jsonKeys(_ text: String, _ what: String) throws -> [Set<String>] {
        let rows = try #require(try JSONValue.parse(Array(text.utf8)).arrayValue, "\(what) is not a JSON array")
        return rows.map { Set($0.objectValue?.keys.map { $0 } ?? []) }
    }

    @Test("schemas/answers.md is the column reference made from the declarations, listing every answer and column")
    func columnReference() throws {
        let made = AnswerReference.markdown(Self.catalogue)
        let path = Self.root + "/schemas/answers.md"
        if ProcessInfo.processInfo.environment["HANDOVER_WRITE_REFERENCE"] == "1" { try made.write(toFile: path, atomically: true, encoding: .utf8) }
        let documented = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            documented == made,
            "schemas/answers.md differs from the declarations: HANDOVER_WRITE_REFERENCE=1 swift test --filter columnReference writes it")
        for answer in Self.catalogue {
            #expect(documented.contains("## \(answer.name)\n"), "\(answer.name)")
            for column in answer.columns {
                #expect(documented.contains("| `\(column.name)` | \(column.type.rawValue) |"), "\(answer.name).\(column.name)")
            }
        }
    }

    @Test("one fact, one name: columns of the same name have the same type, meaning and personal mark in every answer and export")
    func vocabulary() {
        var first: [String: (answer: String, column: ColumnDescription)] = [:]
        for answer in Self.catalogue {
            for column in answer.columns {
                guard let seen = first[column.name] else {
                    first[column.name] = (answer.name, column)
                    continue
                }
                #expect(
                    seen.column.type == column.type && seen.column.meaning == column.meaning && seen.column.isPersonal == column.isPersonal,
                    "\(column.name) means one thing in \(seen.answer) and another in \(answer.name)")
            }
        }
        // The renamed columns are gone from the answers they were renamed in.
        for rename in AnswerRename.all {
            let answer = Self.catalogue.first { $0.name == rename.answer }
            #expect(
                answer?.columns.contains { $0.name == rename.new } == true && answer?.columns.contains { $0.name == rename.old } == false, "\(rename)"
            )
        }
    }

    @Test("the SQLite and PostgreSQL exports' tables carry exactly the declared export columns, in order, with the declared types and nullability")
    func exportSchemas() throws {
        // SQLite: the schema the export runs, run in SQLite and read back column by column.
        let script = """
            import sqlite3, sys, json
            c = sqlite3.connect(':memory:'); c.executescript(sys.stdin.read())
            print(json.dumps({t: [[r[1], r[2], bool(r[3] or r[5])] for r in c.execute(f'PRAGMA table_info({t})')] for t in ['events', 'users', 'event_rows']}))
            """
        let sqlite = try JSONValue.parse(Array(try python(script, input: Data(ExportSchema.sql.utf8)).utf8))
        let sqliteType: [ColumnType: String] = [.text: "TEXT", .integer: "INTEGER", .boolean: "INTEGER", .time: "TEXT", .json: "TEXT"]
        for (table, answer) in [
            ("events", ExportAnswers.events.description), ("users", ExportAnswers.users.description),
            ("event_rows", ExportAnswers.eventRows.description),
        ] {
            let columns = sqlite[table]?.arrayValue ?? []
            let found = columns.map { $0.arrayValue ?? [] }
            #expect(found.map { $0.first?.stringValue ?? "" } == answer.columns.map(\.name), "SQLite \(table)")
            for (column, declared) in zip(found, answer.columns) where column.count == 3 {
                #expect(
                    column[1].stringValue == sqliteType[declared.type] && column[2].boolValue == !declared.isOptional,
                    "SQLite \(table).\(declared.name): \(column)")
            }
        }
        // PostgreSQL: each column line of the CREATE TABLE statements the export runs, then exact_text.
        let postgresTypes: [ColumnType: Set<String>] = [
            .text: ["text"], .integer: ["bigint", "integer"], .boolean: ["boolean"], .time: ["timestamptz"], .json: ["jsonb"],
        ]
        for (table, answer) in [
            ("events", ExportAnswers.events.description), ("users", ExportAnswers.users.description),
            ("event_rows", ExportAnswers.eventRows.description),
        ] {
            let statement = try #require(
                PostgresExportSchema.sql.components(separatedBy: "CREATE TABLE \(table) (").dropFirst().first?.components(separatedBy: "\n);").first)
            // Column lines only: not comments, nor a table's own key (`PRIMARY KEY (a, b)`).
            let lines = statement.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                !$0.isEmpty && !$0.hasPrefix("--") && !$0.hasPrefix("PRIMARY KEY (")
            }
            let found = lines.map { line in line.split(separator: " ").map(String.init) }
            #expect(found.map { $0[0] } == answer.columns.map(\.name) + ["exact_text"], "PostgreSQL \(table)")
            for (words, declared) in zip(found, answer.columns) {
                let type = words[1].trimmingCharacters(in: CharacterSet(charactersIn: ","))
                let required = lines.first { $0.hasPrefix(words[0] + " ") }.map { $0.contains("NOT NULL") || $0.contains("PRIMARY KEY") } ?? false
                #expect(
                    postgresTypes[declared.type]?.contains(type) == true && required == !declared.isOptional,
                    "PostgreSQL \(table).\(declared.name): \(words)")
            }
        }
    }

    @Test("every answer's table, JSON and CSV, the report's tables, the run outputs and the file exports carry exactly the declared columns")
    func outputsCarryTheirColumns() throws {
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        let queries: [(AnswerDescription, [String])] = [
            (Answers.migrated.description, ["query", "migrated"]), (Answers.pending.description, ["query", "pending"]),
            (Answers.failures.description, ["query", "failures"]), (Answers.failuresByClass.description, ["query", "failures", "--by-class"]),
            (Answers.unmatched.description, ["query", "unmatched"]), (Answers.state.description, ["query", "state"]),
            (Answers.events.description, ["query", "events", "--limit", "50"]), (Answers.window.description, ["window"]),
        ]
        for (answer, arguments) in queries {
            let names = answer.columns.map(\.name)
            let base = arguments + ["--ledger", ledger]
            // An empty answer's table says "(no rows)" instead of a header.
            let table = try output(base)
            #expect(table == "(no rows)\n" || tableHeader(table) == names, "\(answer.name) table")
            #expect(csvHeader(try output(base + ["--format", "csv"])) == names, "\(answer.name) CSV")
            let json = try output(base + ["--format", "json"])
            // `query events --format json` prints the events themselves (the log's own JSON).
            if answer.name != "events" {
                let rows = try jsonKeys(json, answer.name)
                #expect(rows.allSatisfy { $0 == Set(names) }, "\(answer.name) JSON")
                // The demo's ledger always has rows in these (others depend on the faults its seed gives).
                if ["migrated", "state", "window"].contains(answer.name) { #expect(!rows.isEmpty, "\(answer.name) JSON has no rows") }
            }
        }

        // `query user`: the state's fields and the history, in every format.
        let migrated = try JSONValue.parse(Array(try output(["query", "migrated", "--ledger", ledger, "--format", "json"]).utf8))
        let someone = try #require(migrated.arrayValue?.first?["account_id"]?.stringValue)
        let user = try JSONValue.parse(Array(try output(["query", "user", someone, "--ledger", ledger, "--format", "json"]).utf8))
        #expect(Set(user.objectValue?.keys.map { $0 } ?? []) == Set(Answers.user.names))
        let history = user["history"]?.arrayValue ?? []
        #expect(!history.isEmpty && history.allSatisfy { Set($0.objectValue?.keys.map { $0 } ?? []) == Set(Answers.events.names) })
        #expect(csvHeader(try output(["query", "user", someone, "--ledger", ledger, "--format", "csv"])) == Answers.user.names)
        let screen = try output(["query", "user", someone, "--ledger", ledger]).components(separatedBy: "\nHistory:\n")
        #expect(screen.count == 2 && screen[0].split(separator: "\n").allSatisfy { Answers.state.names.contains(String($0.prefix { $0 != " " })) })
        #expect(tableHeader(screen.last ?? "") == Answers.events.names)

        // The report's tables.
        let report = try JSONValue.parse(Array(try output(["report", "--ledger", ledger, "--format", "json"]).utf8))
        for (key, answer) in [
            ("migrations_per_day", MigrationReport.Day.answer.names), ("notifications_by_type", MigrationReport.NotificationFigures.answer.names),
            ("pending", Answers.pending.names), ("failures_by_class", Answers.failuresByClass.names), ("unmatched_users", Answers.unmatched.names),
        ] {
            let rows = report[key]?.arrayValue ?? []
            #expect(rows.allSatisfy { Set($0.objectValue?.keys.map { $0 } ?? []) == Set(answer) }, "report \(key)")
            if key == "migrations_per_day" { #expect(!rows.isEmpty, "report \(key) has no rows") }
        }

        // The runs' output files.
        #expect(
            csvHeader(try String(contentsOfFile: try DemoLedger.copy(file: "handoff.csv", into: dir), encoding: .utf8))
                == MigrationOutputRow.generation.names)
        #expect(
            csvHeader(try String(contentsOfFile: try DemoLedger.copy(file: "exchanged.csv", into: dir), encoding: .utf8))
                == MigrationOutputRow.exchange.names)

        // The file exports, and the SQLite file's own tables.
        _ = try output(["export", "--ledger", ledger, "--format", "csv", "--out", dir.sub("csv")])
        _ = try output(["export", "--ledger", ledger, "--format", "jsonl", "--out", dir.sub("jsonl")])
        _ = try output(["export", "--ledger", ledger, "--format", "sqlite", "--out", dir.sub("export.sqlite")])
        for (table, answer) in [
            ("events", ExportAnswers.events.names), ("users", ExportAnswers.users.names), ("event_rows", ExportAnswers.eventRows.names),
        ] {
            #expect(csvHeader(try String(contentsOfFile: dir.sub("csv/\(table).csv"), encoding: .utf8)) == answer, "CSV export \(table)")
            let lines = try String(contentsOfFile: dir.sub("jsonl/\(table).jsonl"), encoding: .utf8).split(separator: "\n")
            #expect(
                !lines.isEmpty
                    && lines.allSatisfy { (try? JSONValue.parse(Array($0.utf8)))?.objectValue.map { Set($0.keys) == Set(answer) } == true },
                "JSON lines export \(table)")
            let columns = try python(
                "import sqlite3, sys; print(','.join(r[1] for r in sqlite3.connect(sys.argv[1]).execute('PRAGMA table_info(\(table))')))",
                [dir.sub("export.sqlite")])
            #expect(columns.trimmingCharacters(in: .newlines) == answer.joined(separator: ","), "SQLite export \(table)")
        }
    }

    @Test(
        "a field holding CR, LF, CRLF, a quote or a comma comes back through Python's csv module unchanged from every CSV output without formula neutralisation"
    )
    func csvRoundTrip() async throws {
        let awkward = ["a,b", "say \"hi\"", "two\nlines", "cr\rhere", "crlf\r\nhere", "all ,\"\r\n\r\n of them"]
        let projection = UserProjection()
        let path = dir.sub("ledger")
        let ledger = try await Ledger.create(at: path, testIdentity(), folders: [projection])
        for (i, text) in awkward.enumerated() {
            let failure = CallFailure(kind: .invalidRequest, message: text)
            _ = try await ledger.append(
                EventDraft(
                    .transferIDExchangeFailed(TransferIDExchangeFailed(failure: failure)),
                    identifiers: Identifiers(accountID: "acct \(text)", transferSub: "t-\(i)")))
        }
        ledger.close()
        let read = """
            import csv, sys, json
            rows = list(csv.DictReader(open(sys.argv[1], newline='', encoding='utf-8')))
            print(json.dumps({c: [r[c] for r in rows] for c in sys.argv[2:]}))
            """
        func column(_ file: String, _ names: String...) throws -> JSONValue {
            try JSONValue.parse(Array(try python(read, [file] + names).utf8))
        }
        let accounts = awkward.map { "acct \($0)" }
        // An answer, on standard output.
        for answer in ["state", "failures", "pending"] {
            try output(["query", answer, "--ledger", path, "--format", "csv"]).write(
                toFile: dir.sub("\(answer).csv"), atomically: true, encoding: .utf8)
            let found = try column(dir.sub("\(answer).csv"), "account_id", "last_error")
            #expect(found["account_id"]?.arrayValue?.compactMap(\.stringValue) == accounts, "\(answer)")
            #expect(found["last_error"]?.arrayValue?.compactMap(\.stringValue) == awkward, "\(answer)")
        }
        // A file export without neutralisation.
        _ = try output(["export", "--ledger", path, "--format", "csv", "--no-neutralize-formulas", "--out", dir.sub("export")])
        #expect(try column(dir.sub("export/users.csv"), "last_error")["last_error"]?.arrayValue?.compactMap(\.stringValue) == awkward)
        // (the first event, "ledger created", names nobody)
        #expect(
            try column(dir.sub("export/events.csv"), "account_id")["account_id"]?.arrayValue?.compactMap(\.stringValue).filter { !$0.isEmpty }
                == accounts)
        // A run's output file.
        let rows = awkward.map {
            MigrationOutputRow(accountID: $0, transferSub: "t \($0)", recipientSub: $0, email: .clear($0), isPrivateEmail: true)
        }
        try MigrationOutputRow.write(rows, as: MigrationOutputRow.exchange, to: dir.sub("exchanged.csv"))
        let output = try column(dir.sub("exchanged.csv"), "account_id", "transfer_sub", "recipient_sub", "email")
        #expect(
            output["account_id"]?.arrayValue?.compactMap(\.stringValue) == awkward
                && output["email"]?.arrayValue?.compactMap(\.stringValue) == awkward)
        #expect(output["transfer_sub"]?.arrayValue?.compactMap(\.stringValue) == awkward.map { "t \($0)" })
    }
}
