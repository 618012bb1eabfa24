import ArgumentParser
import Basics
import Foundation
import Ledger
import Projections
import Reporting

struct ReportCommand: ParsableCommand, EitherTeamsCommand {

    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract:
            "The standard questions answered: users known and migrated (by path, per day, before the deadline), pending, failures, notifications, erasures.",
        discussion: """
            --html FILE writes the report as one self-contained page (inline SVG charts and CSS, no scripts) that prints well to PDF, \
            and prints one line saying what it wrote where instead of the text report; with --format json the JSON is still printed, \
            and that line goes to standard error.
            """, exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions

    @Option(help: SummaryFormat.help)
    var format: SummaryFormat = .text

    @OptionGroup var time: AsOfOptions

    @Option(help: ArgumentHelp("Write the report as one self-contained HTML file (and print one line, not the text report).", valueName: "file"))
    var html: String?

    @Option(
        help: ArgumentHelp(
            "Team A's ledger, for a report on team B's: adds the \"both halves\" section (reconcile's totals, after checking team A's checkpoints).",
            valueName: "dir"))
    var sender: String?

    func run() throws {
        let (ledger, projection) = try ledgerOptions.open(.readOnly, for: self)
        defer { ledger.close() }
        var report = try MigrationReport.make(ledger: ledger, projection: projection, asOf: time.asOf)
        if let sender {
            let (senderLedger, senderProjection) = try LedgerOptions.openOther(sender)
            defer { senderLedger.close() }
            try checkRoles(sender: senderLedger, at: sender, option: "--sender", recipient: ledger, at: ledgerOptions.directory)
            report.bothHalves = try BothHalves.make(
                Reconciliation(
                    sender: senderLedger, senderProjection: senderProjection, recipient: ledger,
                    recipientProjection: projection, asOf: time.asOf))
        }
        if let html { try write(report.html, to: html) }
        let written = html.map {
            "Wrote the HTML report to \($0): \(counted(report.usersKnown, "user")), \(report.migrated) migrated, "
                + "through event \(report.throughSequence) of team \(report.identity.teamID)'s ledger"
                + (report.isHistorical ? " (as of \(report.asOf.rfc3339))." : ".")
        }
        switch format {
        case .text: if let written { Console.out(written) } else { Console.data(report.text, terminator: "") }
        case .json:
            Console.data(String(decoding: InertText.json(report.json.canonicalBytes), as: UTF8.self))
            if let written { Console.error(written) }
        }
    }
}
