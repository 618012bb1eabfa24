import Basics
import Foundation
import LMDB
import LedgerSamples
import LogEngine
import TestSupport
import Testing

@testable import Ledger

/// `verify` reads the log in chunks and batches on two threads: whatever the sizes, it finds
/// what a single pass finds, at the same sequence, with the same log before it.
@Suite("Log verification")
struct LogVerificationTests {
    /// Sizes that put many chunk, batch and idempotency-batch edges in a few hundred events.
    static let small = LogVerification.Sizes(chunk: 50, batch: 7, chainRun: 2, idempotencyBatch: 20)
    static let sizes = [small, LogVerification.Sizes()]

    /// 300 events after `ledger-created`, appended 1 to 5 at a time (so recorded times repeat),
    /// of two types, two in three with an idempotency key, some keys with characters JSON escapes.
    private func ledger(in dir: TemporaryDirectory) async throws -> String {
        let path = dir.sub("l")
        let ledger = try await Ledger.create(at: path, testIdentity())
        defer { ledger.close() }
        var i = 0
        while i < 300 {
            let drafts = (i..<min(300, i + 1 + i % 5)).map { i in
                let key: String? = i % 3 == 0 ? nil : i % 7 == 0 ? "call \"\(i)\"\\\n" : "call-\(i)"
                let identifiers = Identifiers(accountID: "acct-\(i)", transferSub: "t-\(i)")
                if i % 4 == 0 {
                    return EventDraft(
                        .transferIDExchanged(TransferIDExchanged(email: nil, isPrivateEmail: nil)), identifiers: identifiers, idempotencyKey: key)
                }
                return EventDraft(
                    .transferIDExchangeFailed(
                        TransferIDExchangeFailed(failure: CallFailure(kind: .serverError, httpStatus: 503, message: "HTTP 503"))),
                    identifiers: identifiers, idempotencyKey: key)
            }
            _ = try await ledger.append(contentsOf: drafts)
            i += drafts.count
        }
        return path
    }

    private func copy(
        _ path: String, to name: String, in dir: TemporaryDirectory, _ change: (WriteTransaction) throws -> Void = { _ in }
    ) throws -> String {
        let copy = dir.sub(name)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try Environment(path: copy).write { txn in try change(txn) }
        return copy
    }

    @Test("at every chunk and batch size: intact, the same head and root, and the tree head at any size")
    func sameAnswerAtEverySize() async throws {
        let dir = TemporaryDirectory()
        let path = try await ledger(in: dir)
        let ledger = try Ledger.open(at: path)
        defer { ledger.close() }
        let sizesAsked: [UInt64] = [0, 1, 6, 7, 8, 49, 50, 51, 100, 301]
        let expected = try ledger.read { view in try sizesAsked.map { try view.subtreeHash(0..<$0) } }
        let head = try ledger.read { try $0.head() }
        for sizes in Self.sizes {
            for (asked, root) in zip(sizesAsked, expected) {
                let report = try ledger.verify(rootAt: asked, sizes: sizes)
                #expect(report.isIntact, "\(report.problem ?? "")")
                #expect(report.eventCount == 301 && report.headHash == Hex.encode(head.hash))
                #expect(report.treeRoot == expected.last && report.rootAtRequestedSize == root, "size \(asked), chunk \(sizes.chunk)")
            }
        }
    }

    @Test("a flipped byte at each batch and chunk edge: found at its sequence, the head and tree those before it")
    func flippedByteAtEveryEdge() async throws {
        let dir = TemporaryDirectory()
        let path = try await ledger(in: dir)
        let (heads, roots) = try {
            let ledger = try Ledger.open(at: path)
            defer { ledger.close() }
            return try ledger.read { view in
                (
                    try (0...301).map { $0 == 0 ? ChainHead.genesis.hash : Array(try #require(try view.record($0))[0..<32]) },
                    try (0...301).map { try view.subtreeHash(0..<UInt64($0)) }
                )
            }
        }()
        // The draft numbered i is event i + 2 (event 1 is ledger-created).
        for sequence in [2, 7, 8, 9, 50, 51, 52, 150, 301] {
            let flipped = try copy(path, to: "flip-\(sequence)", in: dir)
            try flipByte(in: flipped, inRecordContaining: "\"acct-\(sequence - 2)\"")
            let ledger = try Ledger.open(at: flipped)
            defer { ledger.close() }
            for sizes in Self.sizes {
                let report = try ledger.verify(sizes: sizes)
                #expect(
                    report.firstBadSequence == UInt64(sequence) && report.problem?.contains("chain hash mismatch") == true, "\(report.problem ?? "")")
                #expect(report.eventCount == UInt64(sequence - 1))
                #expect(
                    report.headHash == Hex.encode(heads[sequence - 1]) && report.treeRoot == roots[sequence - 1],
                    "event \(sequence), chunk \(sizes.chunk)")
            }
        }
    }

    @Test("two altered records: the first is reported, whichever thread checks which")
    func firstOfTwoAlterations() async throws {
        let dir = TemporaryDirectory()
        let path = try await ledger(in: dir)
        // Events 40 and 260: in one default batch, in chain runs far apart; 260's run is the
        // one the other thread may reach first. Small sizes put them in different chunks.
        let altered = try copy(path, to: "two", in: dir)
        try flipByte(in: altered, inRecordContaining: "\"acct-38\"")
        try flipByte(in: altered, inRecordContaining: "\"acct-258\"")
        let ledger = try Ledger.open(at: altered)
        defer { ledger.close() }
        for sizes in Self.sizes + [LogVerification.Sizes(chainRun: 1), LogVerification.Sizes(chainRun: 100_000)] {
            for _ in 0..<5 {
                let report = try ledger.verify(sizes: sizes)
                #expect(report.firstBadSequence == 40 && report.eventCount == 39, "\(report.problem ?? ""), run \(sizes.chainRun)")
            }
        }
    }

    @Test("an idempotency entry moved to another event, the count unchanged: found, naming the key, wherever the lookups fall")
    func idempotencyEntryMoved() async throws {
        let dir = TemporaryDirectory()
        let path = try await ledger(in: dir)
        // Draft 14 carries a key with a quote, a backslash and a newline (14 % 7 == 0): event 16.
        for (sequence, key) in [(UInt64(16), "call \"14\"\\\n"), (UInt64(291), "call-289")] {
            let moved = try copy(path, to: "moved-\(sequence)", in: dir) { txn in
                let index = try txn.openDatabase("idempotency_index", flags: [.duplicateSort, .duplicateFixed], create: false)
                let hash = LedgerSchema.idempotencyHash(key)
                #expect(try txn.delete(index, key: hash, value: BigEndian.bytes(sequence)))
                _ = try txn.put(index, key: hash, value: BigEndian.bytes(sequence + 1))
            }
            let ledger = try Ledger.open(at: moved)
            defer { ledger.close() }
            for sizes in Self.sizes {
                let report = try ledger.verify(sizes: sizes)
                let named = "idempotency_index does not lead from key \"\(key)\" to event \(sequence)"
                #expect(report.problem == named && report.firstBadSequence == nil, "\(report.problem ?? "")")
            }
        }
    }

    @Test("a time entry naming another event, and a type entry missing: found at every size")
    func timeAndTypeEntries() async throws {
        let dir = TemporaryDirectory()
        let path = try await ledger(in: dir)
        let time = try copy(path, to: "time", in: dir) { txn in
            let index = try txn.openDatabase("time_index", create: false)
            let (key, value) = try txn.withCursor(index) { cursor in
                let entry = try #require(
                    try cursor.seek(atLeast: BigEndian.bytes(0)).flatMap { _ in try cursor.next() }.flatMap { _ in try cursor.next() })
                return (Array(entry.key), try BigEndian.uint64(entry.value))
            }
            _ = try txn.put(index, key: key, value: BigEndian.bytes(value - 1))
        }
        let type = try copy(path, to: "type", in: dir) { txn in
            let index = try txn.openDatabase("type_index", flags: [.duplicateSort, .duplicateFixed], create: false)
            #expect(try txn.delete(index, key: Array("transfer-id-exchanged".utf8), value: BigEndian.bytes(102)))
        }
        for (copy, expected) in [(time, "time_index names event"), (type, "type_index does not file event 102 under its type transfer-id-exchanged")]
        {
            let ledger = try Ledger.open(at: copy)
            defer { ledger.close() }
            for sizes in Self.sizes {
                let report = try ledger.verify(sizes: sizes)
                #expect(report.problem?.contains(expected) == true, "\(report.problem ?? "")")
            }
        }
    }
}

/// ``IndexedFields`` reads the ledger's own form and nothing it cannot read exactly.
@Suite("Indexed fields")
struct IndexedFieldsTests {
    @Test("every sample event: the same fields as the full decode; every truncation and a repeated key read as nothing")
    func samples() throws {
        for (index, sample) in (EventSamples.all() + EventSamples.variants()).enumerated() {
            let event = RecordedEvent(
                sequence: UInt64(index + 1), recordedAt: Timestamp(microseconds: 1_790_000_000_000_000 + Int64(index)),
                actor: Actor(osUser: "u", host: "h", tool: "handover test"), draft: sample)
            let json = event.canonicalJSON
            let read = try #require(json.withUnsafeBytes { IndexedFields(json: $0) }, "\(sample.type)")
            let decoded = IndexedFields(event)
            #expect(
                read.sequence == decoded.sequence && read.recordedAt == decoded.recordedAt && read.type == decoded.type
                    && read.idempotencyHash == decoded.idempotencyHash, "\(sample.type)")
            for end in 0..<json.count {
                #expect(json[..<end].withUnsafeBytes { IndexedFields(json: $0) } == nil, "\(sample.type) cut at \(end)")
            }
            var repeated = json
            repeated.removeLast()
            repeated += Array(#","seq":7}"#.utf8)
            #expect(repeated.withUnsafeBytes { IndexedFields(json: $0) } == nil)
        }
    }
}
