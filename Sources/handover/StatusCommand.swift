import ArgumentParser
import Foundation
import Ledger
import Reporting

/// `handover status`: one screen for the 60 days; exit 1 when not on track.
struct StatusCommand: ParsableCommand, EitherTeamsCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "One screen: the window and days left, users by state, failures, the last run, the last checkpoint, what to do next.",
        discussion:
            "Opens the ledger read-only. Exit 0 when on track; 1 when users are not migrated with fewer than --warn-days days left (or the window closed on them), or the last run did not succeed: for cron and monitoring.",
        exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions
    @Option(name: .customLong("warn-days"), help: "Days left below which users not migrated make the status not on track.") var warnDays = 14
    @Option(help: SummaryFormat.help) var format: SummaryFormat = .text

    func validate() throws {
        guard (0...3650).contains(warnDays) else { throw ValidationError("--warn-days must be 0 to 3650") }
    }

    func run() throws {
        let (ledger, projection) = try ledgerOptions.open(.readOnly, for: self)
        defer { ledger.close() }
        let status = try LedgerStatus.read(ledger: ledger, projection: projection, warnDays: warnDays)
        if format == .json { Console.data(status.json) } else { Console.out(status.text) }
        if status.exitStatus != .success { throw CLIExit(status.exitStatus, nil) }
    }
}
