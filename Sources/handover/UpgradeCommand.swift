import ArgumentParser
import Basics
import Ledger
import LogEngine

/// `handover upgrade`: brings a ledger written by an older Handover up to date, explicitly.
struct UpgradeCommand: ParsableCommand, EitherTeamsCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "Bring a ledger written by an older Handover up to date: format, indexes, Merkle tree, key store, projections, verifier key file.",
        discussion: """
            Needs write access. Each step is resumable: a run killed part-way continues where it stopped \
            when run again (a load of the projections in key order starts again). Every command that \
            writes does the same first, and waits while another process loads the projections; \
            commands that only read never do, and say when they need it. Events, their bytes and chain, the Merkle tree and \
            earlier signed checkpoints stay as they are.
            """, exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions

    @Option(
        help: ArgumentHelp(
            "Where to fold the log before loading the projections, for a long log (a new directory, removed after; default: a temporary one).",
            valueName: "dir"))
    var scratch: String?

    @OptionGroup var foldMemory: FoldMemoryOption

    func validate() throws { try validateScratch(scratch) }

    func run() throws {
        let (ledger, _) = try ledgerOptions.open(.readWrite, for: self, scratch: scratch, foldMemory: foldMemory.bytes)
        defer { ledger.close() }
        let head = try ledger.read { try $0.head() }
        guard !ledger.upgrades.isEmpty else {
            Console.out("\(ledgerOptions.directory) is up to date (\(LedgerSchema.formatMarker), \(counted(head.sequence, "event"))); nothing to do.")
            return
        }
        Console.out("Upgraded \(ledgerOptions.directory) to \(LedgerSchema.formatMarker) (\(counted(head.sequence, "event"))):")
        for step in ledger.upgrades { Console.out("  " + step) }
        Console.out("Check it with: \(ShellWord.handover("verify", ledger: ledgerOptions.directory))")
    }
}
