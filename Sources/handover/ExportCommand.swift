import ArgumentParser
import Basics
import Foundation
import Ledger
import Logging
import PostgresAccess
import Relays
import Reporting

extension ExportFormat: ExpressibleByArgument {}

struct ExportCommand: AsyncParsableCommand, EitherTeamsCommand {

    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the users projection, the events and their kept rows for reporting: CSV, JSON lines, SQLite or PostgreSQL.",
        discussion: """
            sqlite: one file laid out as schemas/export-sqlite.sql. csv, jsonl: a directory with users.*, \
            events.*, event_rows.* and manifest.json. postgres: tables in the database --out names (a URL such as \
            postgres://user@host:5432/db?sslmode=require; the password from the URL, PGPASSWORD or \
            ~/.pgpass, never printed), laid out as schemas/export-postgres.sql, with the views of \
            schemas/reporting-views.sql. --since-last adds the events recorded since the previous export \
            (with the rows they keep, and the users changed since) to the same place; re-running after a crash neither duplicates \
            nor skips. --follow (postgres) keeps adding them every --interval until SIGINT or SIGTERM. \
            Email addresses are written only with --include-personal-data, never for erased users.
            """, exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions

    @Option(help: "csv, jsonl, sqlite or postgres.")
    var format: ExportFormat

    @Option(
        help: ArgumentHelp(
            "The SQLite file, the directory for csv and jsonl, or the postgres:// URL; - for standard output (jsonl as one stream of lines tagged with their table, sqlite as the file's bytes).",
            valueName: "path-or-url"))
    var out: String

    @Flag(name: .customLong("since-last"), help: "Add to the export already at --out what is new since it was made.")
    var sinceLast = false

    @Flag(help: "postgres: keep exporting what is new every --interval until SIGINT or SIGTERM.")
    var follow = false

    @Option(help: ArgumentHelp("With --follow, seconds between looks at the ledger.", valueName: "seconds"))
    var interval: Double = 5

    @Option(help: ArgumentHelp("postgres: events per transaction; a run stopped at any moment redoes at most this many.", valueName: "events"))
    var slice = Exporter.defaultSlice

    @Option(
        name: .customLong("lock-wait"),
        help: ArgumentHelp(
            "postgres: seconds to wait while another exporter holds the database (an exporter killed mid-statement holds it until the server notices).",
            valueName: "seconds"))
    var lockWait: Double = Exporter.defaultLockWait.inSeconds

    @Flag(name: .customLong("include-personal-data"), help: "Write email addresses in clear (never for erased users).")
    var includePersonalData = false

    @Flag(
        inversion: .prefixedNo,
        help:
            "csv: put a ' before cells that begin with =, +, -, @, tab or CR, so spreadsheets show them as text (OWASP's CSV-injection defence). On for a new export; --since-last keeps the export's own setting."
    )
    var neutralizeFormulas: Bool?

    func validate() throws {
        if follow && format != .postgres { throw ValidationError("--follow needs --format postgres") }
        if neutralizeFormulas != nil && format != .csv {
            throw ValidationError("--neutralize-formulas and --no-neutralize-formulas apply to --format csv")
        }
        guard interval > 0, interval <= 86_400 else { throw ValidationError("--interval takes seconds between 0 and 86400") }
        guard slice >= 1 else { throw ValidationError("--slice takes a number of events, at least 1") }
        guard lockWait >= 0, lockWait <= 86_400 else { throw ValidationError("--lock-wait takes seconds between 0 and 86400") }
        if out == "-" {
            if format == .csv {
                throw ValidationError(
                    "--out - (standard output) holds one stream, and a csv export is a directory of files (users, events, event_rows, manifest.json): give --out a directory, or use --format jsonl or sqlite"
                )
            }
            if sinceLast {
                throw ValidationError("--since-last adds to the export at --out; standard output holds none: give --out the export's path")
            }
        }
    }

    func run() async throws {
        let (ledger, projection) = try ledgerOptions.open(.readOnly, for: self)
        defer { ledger.close() }
        if includePersonalData, ledger.sealer.keyStore == nil {
            throw CLIExit.usage(
                "\(ledgerOptions.directory) holds no data keys (a copy made without keys): its email addresses are sealed for good and cannot be exported; export without --include-personal-data"
            )
        }
        var exporter = Exporter(ledger: ledger, projection: projection, includePersonalData: includePersonalData)
        exporter.neutralizeFormulas = neutralizeFormulas
        if format == .postgres {
            try await exportToPostgres(exporter)
        } else if out == "-" {
            let summary = try await OffPool.run { [exporter, format] in try exporter.export(format, to: FileHandle.standardOutput) }
            Console.error(
                "Exported to standard output (\(format.rawValue)): \(counted(summary.eventsAdded, "event")), \(counted(summary.rowsAdded, "kept row")), \(counted(summary.usersWritten, "user"))\(includePersonalData ? ", with personal data" : "")."
            )
        } else {
            report(try await exporter.exportInBackground(format, to: out, sinceLast: sinceLast))
        }
    }

    private func exportToPostgres(_ exporter: Exporter) async throws {
        let target = try PostgresTarget(url: out)
        var logger = Logger(label: "handover.export")
        logger.logLevel = .warning
        guard follow else {
            report(
                try await exporter.export(
                    to: target, sinceLast: sinceLast, slice: slice, lockWait: .milliseconds(Int64(lockWait * 1000)), logger: logger
                ) { through in
                    // Written at once: what a run stopped later will not redo.
                    Console.now("Committed events through sequence \(through) into \(target.masked).")
                })
            return
        }
        let stop = ExportStop()
        Console.now("Following the ledger into \(target.masked) every \(interval.formatted()) s; SIGINT or SIGTERM ends it.")
        let last = try await InterruptSignals.handling({ signal in
            stop.request()
            FileHandle.standardError.write(Data("\n\(signal.rawValue): ending after the export in progress\n".utf8))
        }) {
            try await exporter.follow(
                into: target, interval: .milliseconds(Int(interval * 1000)), slice: slice, lockWait: .milliseconds(Int64(lockWait * 1000)),
                until: stop, logger: logger,
                exported: { summary in
                    report(summary)
                },
                problem: { error in
                    Console.error("warning: \(error); trying again in \(interval.formatted()) s")
                })
        }
        Console.out("Stopped following; \(last.map { "everything through sequence \($0)" } ?? "nothing") is in \(target.masked).")
    }

    private func report(_ summary: ExportSummary) {
        // Written at once, not buffered: a --follow service's log shows each run as it ends.
        Console.now(
            "Exported to \(summary.path) (\(summary.format.rawValue)): \(counted(summary.eventsAdded, "event")) added (through sequence \(summary.toSequence)), \(summary.rowsAdded > 0 ? "\(counted(summary.rowsAdded, "kept row")) added, " : "")\(counted(summary.usersWritten, "user")) written\(includePersonalData ? ", with personal data" : "")."
        )
    }
}
