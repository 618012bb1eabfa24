import ArgumentParser
import Basics
import Ledger
import LogEngine

struct TilesCommand: ParsableCommand, EitherTeamsCommand {

    static let configuration = CommandConfiguration(
        commandName: "tiles",
        abstract: "Write or bring up to date the log as C2SP tlog-tiles in a directory: its latest checkpoint and the tiles of its Merkle tree.",
        discussion:
            "Anyone with the directory (served as files, or copied) computes every inclusion and consistency proof with tools of their own. The directory follows the latest signed checkpoint (`handover checkpoint` signs one); a second run writes only what is new. Entry bundles hold every event as logged, personal identifiers included: only with --entries, and only for whoever may see the log itself (docs/tiles.md).",
        exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions

    @Option(help: ArgumentHelp("The tiles directory, made if missing.", valueName: "dir"))
    var out: String

    @Flag(help: "Also write the entry bundles (tile/entries/N): every event's JSON as hashed.")
    var entries = false

    func run() throws {
        let ledger = try ledgerOptions.openLog(.readOnly, for: self)
        defer { ledger.close() }
        let written = try TileDirectory(path: out).publish(ledger, entries: entries)
        let size = written.checkpoint.treeSize
        Console.data(
            "\(out): the tree of \(counted(size, "event"))"
                + (written.previousSize == 0 ? "" : ", from \(written.previousSize)") + ": "
                + "\(counted(written.fullTiles, "full tile")), \(counted(written.partialTiles, "partial tile"))"
                + (entries ? ", \(counted(written.entryBundles, "entry bundle"))" : "") + " written")
        if let (sequence, bytes) = written.overlongEntry {
            throw CLIExit(
                .failed,
                "event \(sequence) is \(bytes) bytes, longer than an entry bundle holds (\(TileDirectory.longestEntry)): entry bundles stop before it; the hash tiles and the checkpoint are written"
            )
        }
    }
}
