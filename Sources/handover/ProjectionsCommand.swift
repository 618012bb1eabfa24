import ArgumentParser
import Ledger
import Projections

/// `handover projections`: maintain the read models.
struct ProjectionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "projections", abstract: "Maintain the projections folded from the log.", subcommands: [Rebuild.self])

    struct Rebuild: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Fold the projections again from the whole log into a second set, 8,192 events per transaction, then switch to it.")
        @OptionGroup var ledgerOptions: LedgerOptions

        func run() throws {
            let (ledger, projection) = try ledgerOptions.open(.readWrite)
            defer { ledger.close() }
            let start = Timestamp.now()
            let events = try projection.rebuild(ledger)
            let ms = (Timestamp.now().microseconds - start.microseconds) / 1000
            print("Rebuilt the projections from \(events) events in \(ms) ms.")
        }
    }
}
