import ArgumentParser
import Basics
import Foundation
import Ledger
import Migration
import Projections
import Reporting

/// `handover reconcile`: both teams' ledgers joined by `transfer_sub`, read-only on both.
struct ReconcileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Join team A's and team B's ledgers by transfer_sub: who was generated, handed over, received and migrated.",
        discussion:
            "Checks first that every checkpoint of team A's that team B recorded with a package is still extended by team A's log (exit 4, naming it, if the log was rewritten after the handoff); then prints the totals by outcome, or every joined row with --rows. Opens both ledgers read-only.",
        exits: CommandExits.ledger)

    @Option(help: ArgumentHelp("Team A's (the sender's) ledger directory.", valueName: "dir")) var sender: String?
    @Option(
        name: .customLong("packages"), parsing: .upToNextOption,
        help: ArgumentHelp("Instead of team A's ledger: team A's handoff packages (directories), checked with --sender-key.", valueName: "dir"))
    var packages: [String] = []
    @Option(name: .customLong("sender-key"), help: ArgumentHelp("With --packages: team A's verifier key, pinned out of band.", valueName: "file"))
    var senderKey: String?
    @Option(help: ArgumentHelp("Team B's (the recipient's) ledger directory.", valueName: "dir")) var recipient: String
    @Flag(help: "Print every joined transfer_sub instead of the totals.") var rows = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard (sender == nil) != packages.isEmpty else {
            throw ValidationError("give team A's ledger (--sender) or its packages (--packages), one of the two")
        }
        guard packages.isEmpty || senderKey != nil else { throw ValidationError("--packages needs team A's verifier key: --sender-key FILE") }
    }

    func run() throws {
        let (b, recipientProjection) = try LedgerOptions.openOther(recipient)
        defer { b.close() }
        let side: Reconciliation.Sender
        var opened: Ledger?
        defer { opened?.close() }
        if let sender {
            let (a, senderProjection) = try LedgerOptions.openOther(sender)
            opened = a
            try checkRoles(sender: a, at: sender, option: "--sender and --recipient", recipient: b, at: recipient)
            side = .ledger(a, senderProjection)
        } else {
            let role = try b.identity().role
            guard role == .recipient else {
                throw CLIExit.usage(
                    "--recipient takes team B's ledger: \(recipient) is a \(role.rawValue)'s ledger (team \(try b.identity().teamID))")
            }
            let key = try pinnedKey(senderKey ?? "", option: "--sender-key")
            let listings = try packages.map { path in try HandoffPackageReader.evidence(at: path, senderKey: key) }
            side = .packages(listings, origin: key.name)
        }
        let reconciliation = Reconciliation(sender: side, recipient: b, recipientProjection: recipientProjection, asOf: output.asOf)
        let findings = try reconciliation.auditCheckpoints()
        if let failure = ReconcileFailure(findings) { throw failure }
        if output.format == .table {
            let checked = findings.filter(\.checked).count
            let holds = sender == nil ? "each the checkpoint of the package given under its number" : "each still extended by team A's log"
            let unchecked = checked == findings.count ? "" : "; \(findings.count - checked) of packages not given here, unchecked"
            Console.out(
                findings.isEmpty
                    ? "team B recorded no signed package from this ledger of team A's\n"
                    : "\(counted(checked, "checkpoint")) of team A's recorded by team B with its packages: \(holds)\(unchecked)\n")
        }
        if rows {
            try printRows(output.format) { sink in
                let stream = try ReconcileRow.answer.stream(into: sink)
                try reconciliation.forEachRow { try stream.append($0) }
                try stream.finish()
            }
        } else {
            Console.data(ReconcileTotal.answer.table(try reconciliation.totals()).render(output.format), terminator: "")
        }
    }
}
