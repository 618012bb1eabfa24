import Basics
import Foundation
import Ledger
import LogEngine

extension Harness {
    /// A tiles directory read back by `handover tiles` before it writes more: the `checkpoint` it
    /// serves and the tile at the edge of that checkpoint's tree (the parts, joined by `~~~~`),
    /// published over from the sender fixture's ledger. What the directory holds is outside
    /// input (a copy, a server's disk): a refusal is expected, a trap or a torn promise is not.
    static let tilesReadBack = Harness(
        "tiles-read-back", "a tiles directory's checkpoint and edge tile, read back by handover tiles before it writes more"
    ) { input in
        let parts = FuzzInput(input, parts: 2)
        var files: FuzzFiles.Files = [("checkpoint", parts[0])]
        // The tile the served checkpoint's tree ends in, where that checkpoint says.
        let served = try? Checkpoint(parsing: parts.text(0))
        let size = served?.treeSize ?? 0
        let width = Int(size % UInt64(TileID.fullWidth))
        let edge = TileID(.hashes(level: 0), index: size / UInt64(TileID.fullWidth), width: width == 0 ? TileID.fullWidth : width)
        files.append((edge.path, parts[1]))
        let directory = FuzzWorkspace.files("tiles-read-back", files)
        let ledger = FuzzFixtures.senderLedger
        let publication = try TileDirectory(path: directory).publish(ledger, entries: false)
        // Written: the directory now serves the ledger's latest checkpoint.
        let now = try FileBytes.read(directory + "/checkpoint", limit: 1 << 16)
        let latest = try ledger.latestCheckpoint()
        HarnessCheck.expect(
            now.elementsEqual(publication.checkpoint.text.utf8) && publication.checkpoint == latest,
            "a published directory does not serve the ledger's latest checkpoint")
    }
}

extension Harness {
    /// A path asked of `serve --tiles` (`GET /tiles/<path>`): only a tile's own spelling names a
    /// tile, and it names that tile again.
    static let tilePath = Harness("tile-path", "a path asked of serve --tiles, read as a tile's or refused") { input in
        let path = String(decoding: input, as: UTF8.self)
        guard let tile = TileID(path: path) else { throw HarnessRefusal() }
        HarnessCheck.expect(tile.path == path && TileID(path: tile.path) == tile, "a tile path does not read back as the tile it names")
        HarnessCheck.expect(!path.contains("..") && !path.hasPrefix("/") && path.hasPrefix("tile/"), "a tile path leaves the tiles directory")
    }
}
