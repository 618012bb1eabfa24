import Basics
import Foundation
import LogEngine
import TestSupport
import Testing

@testable import Ledger

/// `handover tiles`: the log as C2SP tlog-tiles, read back by aics-tlog, a transparency client
/// that knows nothing of Handover.
@Suite("the log as C2SP tlog-tiles")
struct TilesCommandTests {
    let dir = TemporaryDirectory()

    /// A ledger of `count` events after "ledger created" (or after `existing`'s), with a
    /// checkpoint of it: `count - 1` synthetic events and the person index's commit, which the
    /// checkpoint appends before it signs.
    private func ledger(_ name: String, appending count: Int, to existing: String? = nil) throws -> String {
        let path = existing ?? dir.sub(name)
        let r = try runProduct(
            "handover-lab", ["append", "--ledger", path, "--count", "\(count - 1)", "--prefix", name] + (existing == nil ? ["--create"] : []))
        try #require(r.status == 0, "\(r.err)")
        try #require(try handover("checkpoint", "--ledger", path).status == 0)
        return path
    }

    /// The ledger's verifier key, in a file of its own as a client keeps it.
    private func keyFile(of ledger: String) throws -> String {
        let file = dir.sub("key-\(URL(fileURLWithPath: ledger).lastPathComponent).txt")
        try handover("checkpoint", "--ledger", ledger, "--public-key").out.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// What aics-tlog answers, required to be a success: its JSON.
    @discardableResult
    private func tlog(_ arguments: String...) throws -> [String: Any] {
        let r = try TransparencyTools.tlog(arguments)
        let answer = try #require(r.answer, "aics-tlog \(arguments.joined(separator: " ")): \(r.printed)")
        #expect(r.status == 0 && answer["ok"] as? Bool == true, "aics-tlog \(arguments.joined(separator: " ")): \(r.printed)")
        return answer
    }

    @Test(
        "a log's tiles as it grows, read by aics-tlog: the checkpoint and the tiles it needs, events at tile edges with their entries, consistency from the first tree; each run writes only what is new, partial tiles for every checkpoint; the ledger changes not a byte"
    )
    func growingLog() throws {
        let path = try ledger("l", appending: 300)
        let key = try keyFile(of: path)
        let tiles = dir.sub("tiles")
        let before = try fileStates(path).filter { !$0.key.hasSuffix("lock.mdb") }
        var r = try handover("tiles", "--ledger", path, "--out", tiles, "--entries")
        #expect(r.status == 0 && r.out.contains("the tree of 301 events"), "\(r.out)\(r.err)")
        // 301 leaves: a full level-0 tile and one of 45; one level-1 hash; entries likewise.
        #expect(r.out.contains(": 1 full tile, 2 partial tiles, 2 entry bundles written"), "\(r.out)")
        #expect(try fileStates(path).filter { !$0.key.hasSuffix("lock.mdb") } == before, "tiles only reads the ledger (LMDB's lock files aside)")
        // A second directory, first without entries.
        let later = dir.sub("tiles-later")
        #expect(try handover("tiles", "--ledger", path, "--out", later).status == 0)
        let first = try String(contentsOfFile: tiles + "/checkpoint", encoding: .utf8)
        try first.write(toFile: dir.sub("first.txt"), atomically: true, encoding: .utf8)
        #expect(try Data(contentsOf: URL(fileURLWithPath: tiles + "/tile/0/000")).count == 8_192)
        #expect(try Data(contentsOf: URL(fileURLWithPath: tiles + "/tile/0/001.p/45")).count == 45 * 32)

        let checked = try tlog("verify-checkpoint", "--tiles", tiles, "--vkey-file", key)
        #expect(checked["size"] as? Int == 301 && checked["tiles_ok"] as? Bool == true, "\(checked)")
        for index in [0, 255, 256, 300] {
            let entry = dir.sub("entry-\(index)")
            let included = try tlog("verify-inclusion", "--tiles", tiles, "--vkey-file", key, "--index", "\(index)", "--entry-out", entry)
            #expect(included["index"] as? Int == index)
            let json = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: entry))))
            #expect(json["seq"]?.intValue == Int64(index + 1), "entry \(index) is event \(index + 1) as logged")
        }

        // Grown by 2,000 events, a checkpoint, 1,000 more and another: two new tree sizes.
        _ = try ledger("m", appending: 2_000, to: path)
        _ = try ledger("n", appending: 1_000, to: path)
        r = try handover("tiles", "--ledger", path, "--out", tiles, "--entries")
        #expect(r.status == 0 && r.out.contains("the tree of 3301 events") && r.out.contains(", from 301: "), "\(r.out)\(r.err)")
        // Level 1 had 8 hashes at 2,301 and has 12 now: a partial tile for each; level 0's tile
        // of 2,301 (253 wide) is full by now, and only the full one is written.
        for file in ["tile/1/000.p/8", "tile/1/000.p/12", "tile/0/012.p/229", "tile/entries/012.p/229", "tile/0/008", "tile/entries/008"] {
            #expect(FileManager.default.fileExists(atPath: tiles + "/" + file), "\(file)")
        }
        #expect(!FileManager.default.fileExists(atPath: tiles + "/tile/0/008.p/253"))
        let grown = try tlog("verify-consistency", "--tiles", tiles, "--vkey-file", key, "--old-checkpoint", dir.sub("first.txt"))
        #expect(grown["old_size"] as? Int == 301 && grown["new_size"] as? Int == 3_301, "\(grown)")
        try tlog("verify-inclusion", "--tiles", tiles, "--vkey-file", key, "--index", "3300", "--entry-out", dir.sub("last"))

        // Entries asked for late: every bundle from the first (12 full, one of 229): the directory
        // kept with entries from the start, but for the bundle of 45 that tree of 301 needed
        // while bundle 1 was partial.
        r = try handover("tiles", "--ledger", path, "--out", later, "--entries")
        #expect(r.status == 0 && r.out.contains("13 entry bundles written"), "\(r.out)\(r.err)")
        #expect(try tileFiles(later) == tileFiles(tiles).filter { $0.key != "tile/entries/001.p/45" })

        r = try handover("tiles", "--ledger", path, "--out", tiles, "--entries")
        #expect(r.status == 0 && r.out.contains("from 3301: 0 full tiles, 0 partial tiles, 0 entry bundles written"), "\(r.out)\(r.err)")
    }

    @Test(
        "tiles refuses a ledger without a checkpoint (2), another log's directory, a copy of the log older than the directory, a tile that differs from the log, naming the file, and a log whose events no longer lead to its stored tree (4)"
    )
    func refusals() throws {
        let bare = dir.sub("bare")
        #expect(try runProduct("handover-lab", ["append", "--ledger", bare, "--count", "5", "--prefix", "b", "--create"]).status == 0)
        var r = try handover("tiles", "--ledger", bare, "--out", dir.sub("t0"))
        #expect(r.status == 2 && r.err.contains("no checkpoint has been signed"), "\(r.err)")

        let path = try ledger("l", appending: 600)
        let older = dir.sub("older")
        try FileManager.default.copyItem(atPath: path, toPath: older)
        _ = try ledger("more", appending: 50, to: path)
        let tiles = dir.sub("tiles")
        #expect(try handover("tiles", "--ledger", path, "--out", tiles).status == 0)

        _ = try handover("checkpoint", "--ledger", bare)
        r = try handover("tiles", "--ledger", bare, "--out", tiles)
        #expect(r.status == 4 && r.err.contains("\(tiles)/checkpoint is not a checkpoint this ledger signed"), "\(r.err)")
        r = try handover("tiles", "--ledger", older, "--out", tiles)
        #expect(r.status == 4 && r.err.contains("serves 651 events, more than this ledger's latest checkpoint of 601"), "\(r.err)")

        // A changed hash in a full tile: found when the tile is written again.
        let tile = tiles + "/tile/0/001"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: tile)))
        bytes[100] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: tile))
        let key = try keyFile(of: path)
        let client = try TransparencyTools.tlog(["verify-inclusion", "--tiles", tiles, "--vkey-file", key, "--index", "300"])
        #expect(client.status != 0 && client.answer?["ok"] as? Bool != true, "aics-tlog finds it too: \(client.printed)")
        try FileManager.default.removeItem(atPath: tiles + "/checkpoint")
        r = try handover("tiles", "--ledger", path, "--out", tiles)
        #expect(r.status == 4 && r.err.contains("\(tile) differs from the log's tile/0/001"), "\(r.err)")

        // An event changed in the ledger after its tree was stored: nothing is published.
        let changed = dir.sub("changed")
        try FileManager.default.copyItem(atPath: path, toPath: changed)
        try flipByte(in: changed, inRecordContaining: "\"l:100\"")
        r = try handover("tiles", "--ledger", changed, "--out", dir.sub("t-changed"))
        #expect(r.status == 4 && r.err.contains("events 1 to 256 do not hash to the Merkle tree's node over them"), "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: dir.sub("t-changed") + "/checkpoint"))
        // The same in the last tile, still partial: the stored nodes over its first 128 and 64
        // events hide it from the checkpoint's root, not from the tile's own check.
        let changedLast = dir.sub("changed-last")
        try FileManager.default.copyItem(atPath: path, toPath: changedLast)
        try flipByte(in: changedLast, inRecordContaining: "\"more:10\"")
        r = try handover("tiles", "--ledger", changedLast, "--out", dir.sub("t-changed-last"))
        #expect(r.status == 4 && r.err.contains("events 513 to 651 do not hash to the Merkle tree's node over them"), "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: dir.sub("t-changed-last") + "/tile/0/001"), "nothing is published")
    }

    @Test(
        "tiles written while another process appends and checkpoints are signed: each run's directory is the tree of a checkpoint, read by aics-tlog, consistent with the first"
    )
    func tilesWhileAppending() throws {
        let path = try ledger("l", appending: 1_000)
        let key = try keyFile(of: path)
        let tiles = dir.sub("tiles")
        #expect(try handover("tiles", "--ledger", path, "--out", tiles, "--entries").status == 0)
        try FileManager.default.copyItem(atPath: tiles + "/checkpoint", toPath: dir.sub("first.txt"))
        let appender = try RunningProduct("handover-lab", ["append", "--ledger", path, "--count", "6000", "--prefix", "more", "--tasks", "2"])
        var sizes: Set<Int> = []
        while appender.isRunning || sizes.count < 2 {
            #expect(try handover("checkpoint", "--ledger", path).status == 0)
            let r = try handover("tiles", "--ledger", path, "--out", tiles, "--entries")
            #expect(r.status == 0, "\(r.out)\(r.err)")
            let served = try Checkpoint(parsing: try String(contentsOfFile: tiles + "/checkpoint", encoding: .utf8))
            let checked = try tlog("verify-checkpoint", "--tiles", tiles, "--vkey-file", key)
            #expect(checked["size"] as? Int == Int(served.treeSize) && checked["tiles_ok"] as? Bool == true, "\(checked)")
            let last = Int(served.treeSize) - 1
            try tlog("verify-inclusion", "--tiles", tiles, "--vkey-file", key, "--index", "\(last)", "--entry-out", dir.sub("entry"))
            try tlog("verify-consistency", "--tiles", tiles, "--vkey-file", key, "--old-checkpoint", dir.sub("first.txt"))
            sizes.insert(Int(served.treeSize))
        }
        #expect(appender.wait().status == 0)
        #expect(sizes.count >= 2, "the directory followed the log: \(sizes.sorted())")
    }

    @Test(
        "a tiles run killed at random moments (3 kills; 10 at full size) leaves only whole files, each the one an uninterrupted run writes; the next run completes the directory"
    )
    func tilesSurvivesKills() throws {
        let path = dir.sub("l")
        let written = try runProduct("handover-lab", ["scale-write", "--ledger", path, "--events", "100000", "--samples", "1"])
        try #require(written.status == 0, "\(written.err)")
        try #require(try handover("checkpoint", "--ledger", path).status == 0)
        let reference = dir.sub("reference")
        try #require(try handover("tiles", "--ledger", path, "--out", reference, "--entries").status == 0)
        let expected = try tileFiles(reference)
        // About 100,000 events: three levels of tiles, read by aics-tlog up to the last event.
        let key = try keyFile(of: path)
        let checked = try tlog("verify-checkpoint", "--tiles", reference, "--vkey-file", key)
        let size = try #require(checked["size"] as? Int)
        #expect(size > 65_536 && checked["tiles_ok"] as? Bool == true, "\(checked)")
        try tlog("verify-inclusion", "--tiles", reference, "--vkey-file", key, "--index", "\(size - 1)", "--entry-out", dir.sub("last"))

        let killsWanted = TestSize.pick(quick: 3, full: 10)
        var (landed, rounds) = (0, 0)
        while landed < killsWanted && rounds < killsWanted * 4 {
            rounds += 1
            let tiles = dir.sub("killed-\(rounds)")
            let run = try RunningProduct("handover", ["tiles", "--ledger", path, "--out", tiles, "--entries"])
            let ended = PhaseKill.kill(run, once: { FileManager.default.fileExists(atPath: tiles + "/.staging") }, spread: 400_000)
            let left = try tileFiles(tiles)
            for (name, bytes) in left {
                #expect(expected[name] == bytes, "round \(rounds): \(name) is not the file an uninterrupted run writes")
            }
            if ended.signalled && left.count < expected.count { landed += 1 }
            let finished = try handover("tiles", "--ledger", path, "--out", tiles, "--entries")
            #expect(finished.status == 0, "\(finished.err)")
            #expect(try tileFiles(tiles) == expected, "round \(rounds): completed, the directory is the reference's")
        }
        #expect(landed >= killsWanted, "\(PhaseKill.tally(landed, of: rounds, in: "while it wrote tiles"))")
    }

    /// Every file of a tile directory but its lock and staging area, by path, with its bytes.
    private func tileFiles(_ directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        guard let names = FileManager.default.enumerator(atPath: directory) else { return files }
        for case let name as String in names where !name.hasPrefix(".") {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
            }
        }
        return files
    }

    @Test(
        "serve --tiles: aics-tlog checks the checkpoint and an inclusion over HTTP; the checkpoint cached a few seconds, tiles immutable, entry bundles only with the read secret, nothing outside the tile paths"
    )
    func servedOverHTTP() throws {
        let path = try ledger("l", appending: 300)
        let key = try keyFile(of: path)
        let tiles = dir.sub("tiles")
        try #require(try handover("tiles", "--ledger", path, "--out", tiles, "--entries").status == 0)
        let secret = dir.sub("read-secret")
        try "a read secret of some length\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let server = try ServerProcess(["serve", "--ledger", path, "--port", "0", "--tiles", tiles, "--tiles-read-secret-file", secret])
        defer { server.stop() }
        #expect(server.running.output.contains("Serving the tiles in \(tiles) at GET /tiles/, entry bundles with the read secret"))
        let base = server.baseURL + "/tiles/"
        /// Status, headers (lower-cased names) and body of a GET, as curl gives them.
        func get(_ path: String, bearer: String? = nil) throws -> (status: Int, headers: [String: String], body: Data) {
            let head = dir.sub("head")
            let body = dir.sub("body")
            let r = try runCommand(
                "/usr/bin/curl", ["-s", "-D", head, "-o", body] + (bearer.map { ["-H", "Authorization: Bearer \($0)"] } ?? []) + [base + path])
            try #require(r.status == 0, "\(r.err)")
            let lines = try String(contentsOfFile: head, encoding: .utf8).components(separatedBy: "\r\n")
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                if let colon = line.firstIndex(of: ":") {
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            }
            return (Int(lines[0].split(separator: " ")[1]) ?? 0, headers, try Data(contentsOf: URL(fileURLWithPath: body)))
        }
        let checkpoint = try get("checkpoint")
        #expect(checkpoint.status == 200 && checkpoint.headers["cache-control"] == "public, max-age=5")
        let servedCheckpoint = try Data(contentsOf: URL(fileURLWithPath: tiles + "/checkpoint"))
        #expect(checkpoint.body == servedCheckpoint)
        let full = try get("tile/0/000")
        #expect(full.status == 200 && full.headers["cache-control"] == "public, max-age=31536000, immutable" && full.body.count == 8_192)
        let partial = try Data(contentsOf: URL(fileURLWithPath: tiles + "/tile/0/001.p/45"))
        #expect(try get("tile/0/001.p/45").body == partial)
        // Entry bundles hold every event as logged: only with the read secret.
        #expect(try get("tile/entries/000").status == 401)
        #expect(try get("tile/entries/000", bearer: "not the secret at all").status == 401)
        let entries = try get("tile/entries/000", bearer: "a read secret of some length")
        let bundle = try Data(contentsOf: URL(fileURLWithPath: tiles + "/tile/entries/000"))
        #expect(entries.status == 200 && entries.body == bundle)
        // Only a tile's own spelling is read; nothing else under the directory, nothing outside it.
        for other in ["tile/0/0000", "tile/0/x000/000", "tile/0/000.p/0", "tile/64/000", "tile/0/../../l/data.mdb", ".lock", "tile/0/001.p/046"] {
            #expect(try get(other).status == 404, "\(other)")
        }
        // aics-tlog reads the served tiles as any tlog-tiles client: the checkpoint, and event 256
        // (the first of the second tile) proved from them, its bytes taken from the local entries.
        let checked = try tlog("verify-checkpoint", "--tiles", base, "--vkey-file", key)
        #expect(checked["size"] as? Int == 301 && checked["tiles_ok"] as? Bool == true, "\(checked)")
        let entry = dir.sub("entry-256")
        try tlog("verify-inclusion", "--tiles", tiles, "--vkey-file", key, "--index", "256", "--entry-out", entry)
        let included = try tlog("verify-inclusion", "--tiles", base, "--vkey-file", key, "--index", "256", "--leaf", entry)
        #expect(included["index"] as? Int == 256, "\(included)")
    }
}
