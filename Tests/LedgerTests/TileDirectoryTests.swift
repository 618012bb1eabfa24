import Foundation
import LogEngine
import TestSupport
import Testing

@testable import Ledger

/// Tile paths and layouts as C2SP tlog-tiles names them, and what a publication does with an
/// event too long for an entry bundle.
@Suite("tile directories")
struct TileDirectoryTests {
    @Test("tile paths: the index in groups of three digits led by x, partial tiles with their width, entry bundles beside the levels")
    func paths() {
        #expect(TileID(.hashes(level: 0), index: 0).path == "tile/0/000")
        #expect(TileID(.hashes(level: 1), index: 5, width: 17).path == "tile/1/005.p/17")
        #expect(TileID(.hashes(level: 2), index: 1_234_067).path == "tile/2/x001/x234/067")
        #expect(TileID(.entries, index: 1_000, width: 255).path == "tile/entries/x001/000.p/255")
        #expect(TileID(.hashes(level: 0), index: 999).path == "tile/0/999")
    }

    @Test("a tree of 70,000 leaves: 273 full level-0 tiles and one of 112, one full level-1 tile and one of 17, one level-2 tile of 1")
    func layout() {
        #expect(TileID.levels(size: 70_000) == 0..<3)
        #expect(TileID.layout(level: 0, size: 70_000) == (273, 112))
        #expect(TileID.layout(level: 1, size: 70_000) == (1, 17))
        #expect(TileID.layout(level: 2, size: 70_000) == (0, 1))
        #expect(TileID.layout(level: 1, size: 256) == (0, 1) && TileID.levels(size: 256) == 0..<2)
        #expect(TileID.levels(size: 255) == 0..<1 && TileID.levels(size: 0).isEmpty)
    }

    @Test(
        "an event longer than 65,535 bytes (a handoff's rows in its JSON, as before 0.5.0): the hash tiles and the checkpoint are written, entry bundles stop before its bundle, and the publication names it"
    )
    func overlongEntry() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        // 300 short bare lists of one row, then the long one, then 20 more.
        func list(_ n: Int, rows: Range<Int> = 0..<1, sub: (Int) -> String = { "t.\($0)" }) -> EventDraft {
            let body = HandoffRowsReceived(
                origin: nil, package: nil, manifestSHA256: nil, fileSHA256: String(format: "%064d", n),
                chunk: 0, chunkCount: 1, rowCount: rows.count, firstRow: 0, accountIDs: rows.map { "account-\($0)" }, transferSubs: rows.map(sub),
                sequences: [])
            return EventDraft(.handoffRowsReceived(body), idempotencyKey: body.idempotencyKey)
        }
        _ = try await ledger.append(contentsOf: (0..<300).map { list($0) })
        let long = list(300, rows: 0..<1_000) { "000123.\(String(repeating: "f", count: 40)).\($0)" }
        let sequence = try await ledger.append(long).sequence
        _ = try await ledger.append(contentsOf: (301..<321).map { list($0) })
        _ = try ledger.signCheckpoint(with: try ledger.signingKey().key)
        let size = try #require(try ledger.latestCheckpoint()).treeSize
        #expect(sequence > 256, "the event is in the second bundle: \(sequence) of \(size)")

        let tiles = TileDirectory(path: dir.sub("tiles"))
        let written = try tiles.publish(ledger, entries: true)
        let overlong = try #require(written.overlongEntry)
        #expect(overlong.sequence == sequence && overlong.bytes > TileDirectory.longestEntry)
        #expect(written.entryBundles == 1, "bundle 0 only: bundle 1 holds the event")
        let levelZero = TileID.layout(level: 0, size: size)
        #expect(
            FileManager.default.fileExists(
                atPath: tiles.path + "/" + TileID(.hashes(level: 0), index: levelZero.full, width: levelZero.partialWidth).path))
        #expect(FileManager.default.fileExists(atPath: tiles.path + "/checkpoint"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: tiles.path + "/tile/entries") == ["000"], "no bundle, whole or partial, from it on")
    }

    @Test(
        "a stored Merkle node of level 2 that no checkpoint's root reads (131,172 events, the root from the node over 2^17): changed, tiles publishes nothing and names it; unchanged, its level-2 tile is the tree of the level-1 tile"
    )
    func levelTwoNodeChanged() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        let total = 131_172
        try await Self.grow(ledger, to: total)
        #expect(try ledger.latestCheckpoint()?.treeSize == UInt64(total))

        let stored = try ledger.read { try $0.subtreeHash(65_536..<131_072) }
        let nodeKey = LedgerSchema.merkleNodeKey(level: 16, index: 1)
        _ = try ledger.environment.write { txn in try txn.put(ledger.schema.merkle, key: nodeKey, value: [UInt8](repeating: 7, count: 32)) }
        let tiles = TileDirectory(path: dir.sub("tiles"))
        let error = #expect(throws: LedgerError.self) { try tiles.publish(ledger, entries: false) }
        #expect(
            error?.message.contains("the Merkle tree's node over events 65537 to 131072 is not the tree of the nodes below it") == true,
            "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: tiles.path + "/checkpoint"), "nothing published")

        _ = try ledger.environment.write { txn in try txn.put(ledger.schema.merkle, key: nodeKey, value: stored) }
        let written = try tiles.publish(ledger, entries: false)
        #expect(written.checkpoint.treeSize == UInt64(total))
        let levelOne = try Data(contentsOf: URL(fileURLWithPath: tiles.path + "/tile/1/001"))
        let levelTwo = try Data(contentsOf: URL(fileURLWithPath: tiles.path + "/" + TileID(.hashes(level: 2), index: 0, width: 2).path))
        let below = stride(from: 0, to: levelOne.count, by: 32).map { Array(levelOne[$0..<($0 + 32)]).withUnsafeBytes { SHA256Hash($0)! } }
        #expect(Array(levelTwo.suffix(32)) == RowTree(leaves: below).root.bytes && Array(levelTwo.suffix(32)) == stored)
    }

    @Test(
        "a level-1 node published before changed with its level-2 parent, so each is the tree of the nodes below it and no root reads them: the next publication compares the tiles published before, the partial one it widens and the partial one the full tile replaces, and publishes nothing"
    )
    func publishedNodeChangedWithItsParent() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        try await Self.grow(ledger, to: 140_000)
        let tiles = TileDirectory(path: dir.sub("tiles"))
        _ = try tiles.publish(ledger, entries: false)
        // Level 1: tile 1 full, tile 2 of 34 nodes; level 2: a tile of 2 nodes.
        let published = [TileID(.hashes(level: 1), index: 2, width: 34), TileID(.hashes(level: 2), index: 0, width: 2)]
        #expect(published.allSatisfy { FileManager.default.fileExists(atPath: tiles.path + "/" + $0.path) })
        // Past 2^18 the root reads the stored node over the first 2^18 events, and level-1 tile 2 is full.
        try await Self.grow(ledger, to: 262_200)

        // Node (8, k) and its parent (16, k / 256) changed together; the nodes above are as stored.
        func change(levelOne k: Int) throws -> () throws -> Void {
            let group = (k / 256) * 256
            let below: [[UInt8]] = try ledger.read { view in
                try (group..<(group + 256)).map { i in try view.subtreeHash(UInt64(i * 256)..<UInt64((i + 1) * 256)) }
            }
            let parent: [UInt8] = try ledger.read { view in try view.subtreeHash(UInt64(group * 256)..<UInt64((group + 256) * 256)) }
            var changed: [SHA256Hash] = below.map { node in node.withUnsafeBytes { SHA256Hash($0)! } }
            changed[k - group] = [UInt8](repeating: 7, count: 32).withUnsafeBytes { SHA256Hash($0)! }
            let nodeKey = LedgerSchema.merkleNodeKey(level: 8, index: UInt64(k))
            let parentKey = LedgerSchema.merkleNodeKey(level: 16, index: UInt64(k / 256))
            func put(_ node: [UInt8], _ parentNode: [UInt8]) throws {
                _ = try ledger.environment.write { txn in
                    try txn.put(ledger.schema.merkle, key: nodeKey, value: node)
                    try txn.put(ledger.schema.merkle, key: parentKey, value: parentNode)
                }
            }
            try put([UInt8](repeating: 7, count: 32), RowTree(leaves: changed).root.bytes)
            return { try put(below[k - group], parent) }
        }
        for (k, tile) in [(256, published[1]), (512, published[0])] {
            let restore = try change(levelOne: k)
            let error = #expect(throws: TileDirectory.Refusal.self) { try tiles.publish(ledger, entries: false) }
            #expect(
                error?.description
                    == "\(tiles.path)/\(tile.path) differs from the log's \(tile.path): the directory holds another tree, or the log was changed (run `handover verify`)",
                "node (8, \(k))")
            #expect(!FileManager.default.fileExists(atPath: tiles.path + "/tile/1/002"), "nothing published")
            #expect(try Checkpoint(parsing: String(contentsOfFile: tiles.path + "/checkpoint", encoding: .utf8)).treeSize == 140_000)
            try restore()
        }
        #expect(try tiles.publish(ledger, entries: false).checkpoint.treeSize == 262_200)
        #expect(FileManager.default.fileExists(atPath: tiles.path + "/tile/1/002"))
    }

    /// Appends short events to `ledger` until it holds `total`, and signs a checkpoint of them.
    private static func grow(_ ledger: Ledger, to total: Int) async throws {
        var appended = try Int(ledger.latestCheckpoint()?.treeSize ?? 1)
        while appended < total {
            let count = min(4_096, total - appended)
            _ = try await ledger.append(
                contentsOf: (0..<count).map { i in
                    EventDraft(
                        .transferIDExchangeFailed(TransferIDExchangeFailed(failure: CallFailure(kind: .timeout, message: "t"))),
                        identifiers: Identifiers(accountID: "acct-\(appended + i)"))
                })
            appended += count
        }
        _ = try ledger.signCheckpoint(with: try ledger.signingKey().key)
    }
}
