import ArgumentParser
import Basics
import Foundation
import Ledger
import Projections

/// `handover projections`: maintain the read models.
struct ProjectionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projections", abstract: "Maintain the projections folded from the log.", subcommands: [Rebuild.self])

    struct Rebuild: ParsableCommand, EitherTeamsCommand {

        static let configuration = CommandConfiguration(
            abstract:
                "Fold the projections again from the whole log into a second set, loaded in key order, then switch to it; build the person index again.",
            exits: CommandExits.ledger)
        @OptionGroup var ledgerOptions: LedgerOptions

        @Option(
            help: ArgumentHelp(
                "Where to fold the log before loading it (a new directory, removed after; default: a temporary one).", valueName: "dir"))
        var scratch: String?

        @OptionGroup var foldMemory: FoldMemoryOption

        func validate() throws { try validateScratch(scratch) }

        func run() throws {
            let (ledger, projection) = try ledgerOptions.open(.readWrite, for: self, foldMemory: foldMemory.bytes)
            defer { ledger.close() }
            try foldMemory.noteIfSpilling(projection, ledger)
            let start = Timestamp.now()
            let events = try projection.rebuild(ledger, scratch: scratch)
            let ms = (Timestamp.now().microseconds - start.microseconds) / 1000
            Console.out("Rebuilt the projections from \(counted(events, "event")) in \(ms) ms.")
            let indexStart = Timestamp.now()
            try ledger.dropPersonIndex()
            let index = try ledger.rebuildPersonIndex()
            let indexMs = (Timestamp.now().microseconds - indexStart.microseconds) / 1000
            Console.out("Rebuilt the person index (\(counted(index.names, "name"))) from \(counted(index.indexedSize, "event")) in \(indexMs) ms.")
        }
    }
}
