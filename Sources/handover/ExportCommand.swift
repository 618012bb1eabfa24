import ArgumentParser
import Ledger
import Reporting

extension ExportFormat: ExpressibleByArgument {}

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the users projection and the events for reporting: CSV, JSON lines or SQLite.",
        discussion: """
            sqlite: one file laid out as schemas/export-sqlite.sql. csv, jsonl: a directory with users.*, \
            events.* and manifest.json. --since-last adds the events recorded since the previous export \
            (and the users changed since) to the same path; re-running after a crash neither duplicates \
            nor skips. Email addresses are written only with --include-personal-data, never for erased users.
            """)

    @OptionGroup var ledgerOptions: LedgerOptions

    @Option(help: "csv, jsonl or sqlite.")
    var format: ExportFormat

    @Option(help: ArgumentHelp("The SQLite file, or the directory for csv and jsonl.", valueName: "path"))
    var out: String

    @Flag(name: .customLong("since-last"), help: "Add to the export already at --out what is new since it was made.")
    var sinceLast = false

    @Flag(name: .customLong("include-personal-data"), help: "Write email addresses in clear (never for erased users).")
    var includePersonalData = false

    func run() throws {
        let (ledger, projection) = try ledgerOptions.open()
        defer { ledger.close() }
        let summary: ExportSummary
        do {
            summary = try Exporter(ledger: ledger, projection: projection, includePersonalData: includePersonalData)
                .export(format, to: out, sinceLast: sinceLast)
        } catch let error as ExportError where error.code != .io {
            throw CLIExit.usage(error.message)
        } catch let error as ExportError {
            throw CLIExit(code: ExitStatus.failed, message: error.message)
        }
        print("Exported to \(summary.path) (\(format.rawValue)): \(summary.eventsAdded) events added (through sequence \(summary.toSequence)), \(summary.usersWritten) users written\(includePersonalData ? ", with personal data" : "").")
    }
}
