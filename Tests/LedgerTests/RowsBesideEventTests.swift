import Basics
import Foundation
import LMDB
import LedgerSamples
import LogEngine
import TestSupport
import Testing

@testable import Ledger

/// A v2 package's rows, kept beside their "handoff rows received" event in the `rows`
/// database: the event's leaf holds their root and not them; every reader gets them back; a
/// changed, missing or stray row is found; a format-2 ledger is upgraded to keep them.
@Suite("rows kept beside their event")
struct RowsBesideEventTests {
    static let origin = "handover/AAAA111111/o"

    /// Row `i` of the package: every third without an account, some accounts needing quotes.
    static func row(_ i: Int) -> (accountID: String, transferSub: String, sequence: Int) {
        (i % 3 == 0 ? "" : "acct,\"\(i)\"", "t.secret.\(i)", i + 10)
    }

    /// Package `number` of `count` rows as team B records it: its chunks of 1,024 (v2) and the
    /// "handoff received" that the manifest's digest and root are read from.
    static func package(of count: Int, number: Int = 1, salts: [[UInt8]]? = nil) -> (chunks: [HandoffRowsReceived], received: HandoffReceived) {
        let manifestSHA256 = String(repeating: String(UnicodeScalar(UInt8(0x60 + number))), count: 64)  // "aaa…", "bbb…"
        let salts = salts ?? (0..<count).map { _ in RowTree.newSalt() }
        var digest = HandoffRowsDigest(form: .v2)
        for i in 0..<count {
            let r = row(i)
            digest.add(accountID: r.accountID, transferSub: r.transferSub, sequence: UInt64(r.sequence), salt: salts[i])
        }
        let fileSHA256 = digest.finalize()
        let per = HandoffRowsForm.v2.rowsPerChunk
        let chunkCount = (count + per - 1) / per
        let chunks = (0..<chunkCount).map { index in
            let rows = (index * per)..<min(count, (index + 1) * per)
            return HandoffRowsReceived(
                origin: origin, package: number, manifestSHA256: manifestSHA256, fileSHA256: fileSHA256, chunk: index,
                chunkCount: chunkCount, rowCount: count, firstRow: rows.lowerBound, accountIDs: rows.map { row($0).accountID },
                transferSubs: rows.map { row($0).transferSub }, sequences: rows.map { row($0).sequence }, salts: Array(salts[rows]))
        }
        let root = RowTree(leaves: chunks.compactMap(\.rowsRoot)).root
        let received = HandoffReceived(
            senderTeam: "AAAA111111", package: number, rowCount: count, rowsSHA256: fileSHA256, rowsRoot: Hex.encode(root.bytes),
            manifestSHA256: manifestSHA256, manifest: "handover-handoff/v2\n…", packagePath: "handoff-000\(number)",
            checkpoint: CheckpointFields(
                origin: origin, treeSize: 4_000, rootHash: "7f1u3xh1m9g9c0uK0S5Tq2lQ3Yy1mN0nq9XjQe4bq5U=", time: .now(), signature: "AAAA"))
        return (chunks, received)
    }

    /// A ledger holding package `package` as received: its "handoff received", then its chunks.
    static func ledger(
        in dir: TemporaryDirectory, holding package: (chunks: [HandoffRowsReceived], received: HandoffReceived)
    ) async throws
        -> (Ledger, [UInt64])
    {
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        _ = try await ledger.append(EventDraft(.handoffReceived(package.received), idempotencyKey: "handoff-received:\(origin):1"))
        let outcomes = try await ledger.append(
            contentsOf: package.chunks.map { EventDraft(.handoffRowsReceived($0), idempotencyKey: $0.idempotencyKey) })
        return (ledger, outcomes.map(\.sequence))
    }

    @Test("the event's JSON holds the rows' root and count, not the rows; the rows database holds each row's line; readers get the rows back")
    func rowsStoredBeside() async throws {
        let dir = TemporaryDirectory()
        let package = Self.package(of: 5)
        let (ledger, sequences) = try await Self.ledger(in: dir, holding: package)
        defer { ledger.close() }
        let body = package.chunks[0]
        let sequence = sequences[0]
        try ledger.read { view in
            let json = String(decoding: try LogView.eventJSON(ofStoredRecord: #require(try view.record(sequence)), sequence: sequence), as: UTF8.self)
            #expect(!json.contains("t.secret") && !json.contains("account_ids"), "\(json)")
            let root = Hex.encode(try #require(body.rowsRoot).bytes)
            #expect(json.contains("\"rows\":5") && json.contains("\"rows_root\":\"\(root)\""))
            let stored = try view.storedRows(of: sequence, count: 5)
            #expect(stored == body.rowLines)
            #expect(String(decoding: stored[1], as: UTF8.self) == "\"acct,\"\"1\"\"\",t.secret.1,11,\(Hex.encode(body.salts[1]))")
            #expect(String(decoding: stored[0], as: UTF8.self) == ",t.secret.0,10,\(Hex.encode(body.salts[0]))")
            guard case .handoffRowsReceived(let read) = try #require(try view.event(sequence)).body else {
                Issue.record("not a handoff rows received")
                return
            }
            #expect(read == body, "the rows read back are the rows appended")
            var seen: HandoffRowsReceived?
            try view.forEachEvent(from: sequence, through: sequence) { if case .handoffRowsReceived(let b) = $0.body { seen = b } }
            #expect(seen == body)
        }
        #expect(try ledger.verify().isIntact)
        #expect(try ledger.read { try HandoffRowsCheck($0) }.problem == nil)
    }

    @Test(
        "chunks that contradict each other or the package received are each found, naming the package and the event (the ledger's first is 1): out of order, of another file, without the package received, of another row count than the manifest's"
    )
    func contradictingChunksFound() async throws {
        let package = Self.package(of: 1_500)
        func problem(_ chunks: [HandoffRowsReceived], received: HandoffReceived? = package.received) async throws -> (UInt64, String)? {
            let dir = TemporaryDirectory()
            let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
            defer { ledger.close() }
            if let received {
                _ = try await ledger.append(EventDraft(.handoffReceived(received), idempotencyKey: "handoff-received:\(Self.origin):1"))
            }
            _ = try await ledger.append(contentsOf: chunks.map { EventDraft(.handoffRowsReceived($0), idempotencyKey: $0.idempotencyKey) })
            let check = try ledger.read { try HandoffRowsCheck($0) }
            #expect(check.handoffs.map(\.name) == ["package 1 from \(Self.origin)"])
            return check.problem.map { ($0.sequence, $0.text) }
        }
        let name = "package 1 from \(Self.origin)"
        #expect(try await problem(package.chunks) == nil)
        let reversed = try #require(try await problem(package.chunks.reversed()))
        #expect(reversed == (3, "\(name): chunk 1 (rows 1024 to 1500) is recorded where chunk 0 was due"), "\(reversed)")
        var otherFile = package.chunks[1]
        otherFile.fileSHA256 = String(repeating: "0", count: 64)
        let mixed = try #require(try await problem([package.chunks[0], otherFile]))
        #expect(mixed == (4, "\(name): chunk 1 is of another manifest or file than chunk 0"), "\(mixed)")
        let unreceived = try #require(try await problem(package.chunks, received: nil))
        #expect(
            unreceived == (2, "\(name): its rows are recorded, but not the package as received with manifest \(package.received.manifestSHA256)"),
            "\(unreceived)")
        var counted = package.received
        counted.rowCount = 1_499
        let miscounted = try #require(try await problem(package.chunks, received: counted))
        #expect(miscounted.1.hasPrefix("\(name): the rows say 1500 rows hashing to "), "\(miscounted)")
    }

    @Test("a changed row, a missing row and a stray row are each found, naming the event")
    func tamperedRowsFound() async throws {
        let dir = TemporaryDirectory()
        let (ledger, sequences) = try await Self.ledger(in: dir, holding: Self.package(of: 4))
        defer { ledger.close() }
        let sequence = sequences[0]
        func rows(_ change: (WriteTransaction, Database) throws -> Void) throws {
            try ledger.environment.write { txn in try change(txn, try txn.openDatabase("rows", create: false)) }
        }
        func problem() throws -> String? { try ledger.read { try HandoffRowsCheck($0) }.problem.map { "\($0.sequence): \($0.text)" } }

        let second = LedgerSchema.rowKey(sequence, 1)
        let original = try ledger.read { view in try view.storedRows(of: sequence, count: 4)[1] }
        var changed = original
        changed[0] ^= 0x01
        try rows { txn, db in try txn.put(db, key: second, value: changed) }
        #expect(try problem()?.contains("\(sequence): handoff rows: the stored rows do not hash to the chunk's rows_root") == true)
        #expect(throws: LedgerError.self) { try ledger.read { try $0.event(sequence) } }

        try rows { txn, db in try txn.delete(db, key: second) }
        #expect(try problem()?.contains("the rows database holds 1 consecutive rows of its 4") == true)

        try rows { txn, db in
            try txn.put(db, key: second, value: original)
            try txn.put(db, key: LedgerSchema.rowKey(sequence + 7, 0), value: original)
        }
        #expect(try problem()?.contains("the rows database holds 5 rows") == true)
        try rows { txn, db in try txn.delete(db, key: LedgerSchema.rowKey(sequence + 7, 0)) }
        #expect(try problem() == nil)
    }

    @Test(
        "an apply batch's accounts beside its events: the JSON holds their count and root; a changed account line, holders line or settled line is found, naming the event; readers get the accounts back"
    )
    func applyRowsBeside() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        let outcomes = try await ledger.append(contentsOf: Array(EventSamples.all().dropFirst()))
        let drafts = Array(EventSamples.all().dropFirst())
        let intended = try #require(zip(drafts, outcomes).first { $0.0.type == .applyIntended }?.1.sequence)
        let settled = try #require(zip(drafts, outcomes).first { $0.0.type == .applySettled }?.1.sequence)
        let json = try ledger.read { view in
            String(decoding: try LogView.eventJSON(ofStoredRecord: try #require(try view.record(intended)), sequence: intended), as: UTF8.self)
        }
        #expect(json.contains(#""body":{"batch":0,"collision_count":1,"rows":2,"rows_root":""#) && !json.contains("acct-"), "\(json)")
        guard case .applyIntended(let intent)? = try ledger.read({ try $0.event(intended)?.body }) else {
            Issue.record("the intent reads back")
            return
        }
        #expect(intent.accountIDs == ["acct-42", "acct-44"] && intent.rows[1].cell(.recipientSub)?.holders == ["acct-7"])
        #expect(intent.rows.map { $0.cells.map(\.planned) } == [[.change, .change, .change], [.collision, .kept]])
        // Each column's cell comes back as written: the addresses sealed, the kept one without a value.
        let sample = try #require(
            EventSamples.all().compactMap { draft -> ApplyIntended? in
                if case .applyIntended(let b) = draft.body, b.rowsRoot != nil { b } else { nil }
            }.first)
        #expect(intent.rows == sample.rows)
        guard case .sealed? = intent.rows[0].cell(.email)?.old, intent.rows[1].cell(.email)?.old == nil else {
            Issue.record("the email cells read back sealed, the kept one empty: \(intent.rows)")
            return
        }

        func problem() throws -> String? { try ledger.read { try HandoffRowsCheck($0) }.problem.map { "\($0.sequence): \($0.text)" } }
        #expect(try problem() == nil)
        // Each line changed in turn, then put back: account 0 of the intent, its holders line (2), account 1 of the settlement.
        for (sequence, index, found) in [
            (intended, 0, "apply intended batch 0: the stored rows do not hash"), (intended, 2, "apply intended batch 0: a stored holders line"),
            (settled, 1, "apply settled batch 0: the stored rows do not hash"),
        ] {
            let key = LedgerSchema.rowKey(sequence, index)
            let original = try ledger.read { view in
                try view.storedRows(of: sequence, count: try #require(try view.eventAsLogged(sequence)).body.keptRowCount)[index]
            }
            var changed = original
            changed[changed.count - 3] ^= 0x01
            func put(_ value: [UInt8]) throws {
                _ = try ledger.environment.write { txn in try txn.put(try txn.openDatabase("rows", create: false), key: key, value: value) }
            }
            try put(changed)
            let shown = try problem()
            #expect(shown?.hasPrefix("\(sequence): event \(sequence): \(found)") == true, "\(shown ?? "nothing found")")
            #expect(throws: LedgerError.self) { try ledger.read { try $0.event(sequence) } }
            try put(original)
        }
        #expect(try problem() == nil)
    }

    @Test(
        "an account's line of an apply batch is found among the stored lines by its key alone, for keys that need escaping or begin another key; a holders line naming it is not its line"
    )
    func accountLineFound() {
        let keys = ["acct-1", "acct-10", "acct-1\"", "a\\b", "ünï\u{7}", "", "acct-1,"]
        let salt = [UInt8](repeating: 7, count: RowTree.saltLength)
        let holders = ApplyRowLine.holders(row: 0, column: .recipientSub, accounts: keys, salt: salt).bytes
        for kind in [RowTree.Kind.applyIntendedRow, .applySettledRow] {
            let lines =
                [holders]
                + keys.map { key in
                    kind == .applySettledRow
                        ? ApplyRowLine.settled(account: key, outcomes: [ApplyCellOutcome(.recipientSub, .applied)], salt: salt).bytes
                        : ApplyRowLine.intended(
                            account: key,
                            cells: [ApplyRowLine.Cell(column: .recipientSub, old: .text(key), new: nil, planned: .change, holdersSHA256: nil)],
                            salt: salt
                        ).bytes
                }
            for (i, key) in keys.enumerated() {
                #expect(ApplyRowLine.index(ofAccount: key, in: lines) == i + 1, "\(kind) \(key)")
            }
            #expect(ApplyRowLine.index(ofAccount: "acct-", in: lines) == nil)
        }
    }

    @Test("a package's chunks of 1,024 rows each carry a node of the package's row tree: their roots lead to the package's root")
    func chunkRootsLeadToThePackageRoot() {
        let chunks = Self.package(of: 2_500).chunks
        #expect(chunks.map(\.transferSubs.count) == [1_024, 1_024, 452])
        let all = RowTree(kind: .handoffRow, rows: chunks.flatMap(\.rowLines))
        #expect(RowTree(leaves: chunks.compactMap(\.rowsRoot)).root == all.root)
    }

    @Test(
        "a row's package path is read from its package's chunks, whether they follow one another in the log or another package's chunks come between them; a chunk missing gives none"
    )
    func packageChunkRoots() async throws {
        let dir = TemporaryDirectory()
        let first = Self.package(of: 2_500)
        let second = Self.package(of: 1_500, number: 2)
        let roots = first.chunks.compactMap(\.rowsRoot)
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        func append(_ body: EventBody, key: String) async throws -> UInt64 {
            try await ledger.append(EventDraft(body, idempotencyKey: key)).sequence
        }
        for package in [first, second] {
            _ = try await append(.handoffReceived(package.received), key: "handoff-received:\(Self.origin):\(package.received.package)")
        }
        // The first package's chunks in a row, then the second's between the first's: P0 P1 Q0 P2 Q1.
        var sequences: [UInt64] = []
        for chunk in [first.chunks[0], first.chunks[1], second.chunks[0], first.chunks[2], second.chunks[1]] {
            sequences.append(try await append(.handoffRowsReceived(chunk), key: chunk.idempotencyKey))
        }
        try ledger.read { view throws in
            for (chunk, sequence) in zip(first.chunks, [sequences[0], sequences[1], sequences[3]]) {
                #expect(try view.packageChunkRoots(of: chunk, at: sequence) == roots, "chunk \(chunk.chunk)")
            }
            #expect(try view.packageChunkRoots(of: second.chunks[1], at: sequences[4]) == second.chunks.compactMap(\.rowsRoot))
        }
        let third = Self.package(of: 2_100, number: 3)
        _ = try await append(.handoffReceived(third.received), key: "handoff-received:\(Self.origin):3")
        let taken = try await append(.handoffRowsReceived(third.chunks[0]), key: third.chunks[0].idempotencyKey)
        #expect(try ledger.read { try $0.packageChunkRoots(of: third.chunks[0], at: taken) } == nil, "two of three chunks not taken in")
    }

    @Test("a package received in chunks verifies: its rows rebuild the manifest's file and lead to its root; rows that do not are found")
    func packageVerifies() async throws {
        let dir = TemporaryDirectory()
        let package = Self.package(of: 2_100)
        let (ledger, _) = try await Self.ledger(in: dir, holding: package)
        defer { ledger.close() }
        #expect(try ledger.verify().isIntact)
        let check = try ledger.read { try HandoffRowsCheck($0) }
        #expect(check.problem == nil && check.handoffs.map(\.chunksRecorded) == [3])

        // The same rows under a root the manifest does not sign.
        let other = TemporaryDirectory()
        var wrong = Self.package(of: 2_100)
        wrong.received.rowsRoot = String(repeating: "0", count: 64)
        let (misfiled, _) = try await Self.ledger(in: other, holding: wrong)
        defer { misfiled.close() }
        #expect(try misfiled.read { try HandoffRowsCheck($0) }.problem?.text.contains("do not lead to the manifest's rows-root") == true)
    }

    @Test("a format-2 ledger opened for writing gets the rows database and format 3, nothing else changed; read only, it is read as it is")
    func formatTwoUpgraded() async throws {
        let dir = TemporaryDirectory()
        let path = dir.sub("l")
        do {
            let ledger = try await Ledger.create(at: path, testIdentity())
            ledger.close()
        }
        // What a version before rows kept beside their events wrote.
        do {
            let environment = try Environment(path: path, options: Environment.Options(mapSize: 1 << 24))
            try environment.write { txn in
                try txn.drop(try txn.openDatabase("rows", create: false))
                try txn.put(try txn.openDatabase("meta", create: false), key: Array("format".utf8), value: Array("handover-ledger/2".utf8))
            }
        }
        let head = try Ledger.open(at: path, options: Ledger.Options(access: .readOnly))
        #expect(head.upgrades.isEmpty && head.schema.rows == nil)
        #expect(try head.verify().isIntact)
        head.close()

        let ledger = try Ledger.open(at: path)
        defer { ledger.close() }
        #expect(ledger.upgrades == ["format 2 to 3: the database of batch events' rows added (events unchanged)"])
        #expect(
            try ledger.read { try $0.transaction.get($0.schema.meta, key: Array("format".utf8)).map { Array($0) } } == Array("handover-ledger/3".utf8)
        )
        let package = Self.package(of: 2)
        _ = try await ledger.append(EventDraft(.handoffReceived(package.received), idempotencyKey: "handoff-received:\(Self.origin):1"))
        _ = try await ledger.append(EventDraft(.handoffRowsReceived(package.chunks[0]), idempotencyKey: package.chunks[0].idempotencyKey))
        #expect(try ledger.verify().isIntact)
        #expect(try ledger.read { try HandoffRowsCheck($0) }.problem == nil)
    }
}
