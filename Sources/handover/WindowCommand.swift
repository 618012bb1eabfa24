import ArgumentParser
import Basics
import Ledger
import Projections

/// `handover window`: record or show the 60-day transfer window.
struct WindowCommand: AsyncParsableCommand, EitherTeamsCommand {
    static let configuration = CommandConfiguration(
        commandName: "window", abstract: "Record the app-transfer date, or show the deadline and days left.", exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions
    @OptionGroup var output: OutputOptions

    @Option(name: .customLong("accepted-at"), help: ArgumentHelp("When the app transfer was accepted (RFC 3339 or a date).", valueName: "time"))
    var acceptedAt: String?

    @Flag(help: "Replace a different acceptance date recorded earlier (both stay in the log).")
    var correct = false

    func validate() throws {
        if let acceptedAt { _ = try parseTime(acceptedAt, option: "--accepted-at") }
    }

    func run() async throws {
        let (ledger, projection) = try ledgerOptions.open(acceptedAt == nil ? .readOnly : .readWrite, for: self)
        defer { ledger.close() }
        if let acceptedAt {
            let recorded = try await WindowRecorder(ledger: ledger, projection: projection).record(
                acceptedAt: try parseTime(acceptedAt, option: "--accepted-at"), correcting: correct)
            if !recorded { Console.out("The same acceptance date was already recorded; nothing new written.") }
        }
        let table = try answer(ledger, projection, output) { try $0.window() }
        if table.rows.isEmpty, output.format == .table {
            Console.out(
                "No transfer date recorded yet: `\(ShellWord.handover("window", ledger: ledgerOptions.directory, "--accepted-at YYYY-MM-DD"))`.")
        } else {
            Console.data(table.render(output.format), terminator: "")
        }
    }
}
