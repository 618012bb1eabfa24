import ArgumentParser
import Basics
import Foundation
import Ledger
import LogEngine

/// `handover compact`: the ledger's file rewritten without its free pages.
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Rewrite the ledger's file without its free pages, giving back the room a rebuild or an erasure freed.",
        discussion: """
            The ledger's file never shrinks by itself: a projections rebuild writes the new projections \
            beside the old ones and frees the old, and an erasure frees pages too. compact writes a compacted \
            copy beside the file, checks that it ends at the same event with the same chain hash, and renames \
            it over the file. It needs free space for the copy, and the ledger to itself: it is refused while \
            another process (a run, serve, another command) has the ledger open, and a process that opens the \
            ledger while it runs waits for it. Stopped at any moment, the ledger is the old file or the new one.
            """, exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions

    func run() throws {
        let summary = try LedgerCompaction.run(in: ledgerOptions.directory, options: ledgerOptions.options(.readWrite, for: nil))
        let saved = summary.bytesBefore - summary.bytesAfter
        Console.out(
            "Compacted \(ledgerOptions.directory): \(DiskSpace.format(summary.bytesBefore)) to \(DiskSpace.format(summary.bytesAfter)) "
                + "(\(DiskSpace.format(max(saved, 0))) given back); events 1 to \(summary.head.sequence), head \(Hex.encode(summary.head.hash)) unchanged."
        )
    }
}
