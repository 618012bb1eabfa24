import ArgumentParser
import Foundation
import Ledger
import Projections
import Reporting

/// `handover reconcile`: both teams' ledgers joined by `transfer_sub`, read-only on both.
struct ReconcileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile", abstract: "Join team A's and team B's ledgers by transfer_sub: who was generated, handed over, received and migrated.",
        discussion: "Checks first that every checkpoint of team A's that team B recorded with a package is still extended by team A's log (exit 4, naming it, if the log was rewritten after the handoff); then prints the totals by outcome, or every joined row with --rows. Opens both ledgers read-only.")

    @Option(help: ArgumentHelp("Team A's (the sender's) ledger directory.", valueName: "dir")) var sender: String
    @Option(help: ArgumentHelp("Team B's (the recipient's) ledger directory.", valueName: "dir")) var recipient: String
    @Flag(help: "Print every joined transfer_sub instead of the totals.") var rows = false
    @OptionGroup var output: OutputOptions

    func run() throws {
        let senderProjection = UserProjection(), recipientProjection = UserProjection()
        let a = try Ledger.open(at: sender, folders: [senderProjection], options: Ledger.Options(access: .readOnly))
        defer { a.close() }
        let b = try Ledger.open(at: recipient, folders: [recipientProjection], options: Ledger.Options(access: .readOnly))
        defer { b.close() }
        let reconciliation = Reconciliation(sender: a, senderProjection: senderProjection, recipient: b, recipientProjection: recipientProjection, asOf: output.asOf)
        let findings = try reconciliation.auditCheckpoints()
        if let failure = ReconcileFailure(findings) { throw CLIExit(.integrity, failure.description) }
        if output.format == .table {
            Console.out(findings.isEmpty ? "team B recorded no signed package from this ledger of team A's"
                        : "\(findings.count) checkpoint(s) of team A's recorded by team B with its packages: each still extended by team A's log\n")
        }
        if rows {
            try printRows(output.format) { sink in
                let stream = try ReconcileRow.answer.stream(into: sink)
                try reconciliation.forEachRow { try stream.append($0) }
                try stream.finish()
            }
        } else {
            print(ReconcileTotal.answer.table(try reconciliation.totals()).render(output.format), terminator: "")
        }
    }
}
