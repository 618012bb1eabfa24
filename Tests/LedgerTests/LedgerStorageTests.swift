import Basics
import Foundation
import LMDB
import LedgerSamples
import LogEngine
import TestSupport
import Testing

@testable import Ledger

@Suite("Ledger storage")
struct LedgerStorageTests {
    private func failure(_ i: Int) -> EventDraft {
        EventDraft(
            .transferIDExchangeFailed(TransferIDExchangeFailed(failure: CallFailure(kind: .serverError, httpStatus: 503, message: "HTTP 503"))),
            identifiers: Identifiers(accountID: "acct-\(i)", transferSub: "t-\(i)"))
    }

    @Test("a ledger created with a 1 MiB map takes 200,000 appends without an error")
    func mapGrowsByItself() async throws {
        let dir = TemporaryDirectory()
        var options = Ledger.Options()
        options.mapSize = 1 << 20
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity(), options: options)
        defer { ledger.close() }
        for batch in 0..<200 {
            let outcomes = try await ledger.append(contentsOf: (0..<1000).map { failure(batch * 1000 + $0) })
            #expect(outcomes.allSatisfy { $0.isRecorded })
        }
        #expect(try ledger.read { try $0.head().sequence } == 200_001)
        #expect(ledger.environment.mapSize > 1 << 20)
        #expect(try ledger.verify().isIntact)
    }

    @Test("appends from many tasks get dense sequence numbers and non-decreasing recorded times")
    func concurrentAppends() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        let sequences = try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for lane in 0..<32 {
                group.addTask {
                    var s: [UInt64] = []
                    for i in 0..<50 { s.append(try await ledger.append(failure(lane * 50 + i)).sequence) }
                    return s
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(sequences.sorted() == Array(2...1601))
        var previous = Timestamp(microseconds: 0)
        try ledger.read { view in
            try view.forEachEvent(from: 1, through: 1601) { event in
                #expect(event.recordedAt >= previous)
                previous = event.recordedAt
            }
        }
        #expect(try ledger.verify().isIntact)
    }

    @Test("a duplicate idempotency key is refused atomically: nothing of the second event is written")
    func duplicateIdempotencyKey() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        var first = failure(1)
        first.idempotencyKey = "notification:jti-7"
        var second = failure(2)
        second.idempotencyKey = "notification:jti-7"
        let a = try await ledger.append(first)
        let b = try await ledger.append(second)
        #expect(a.isRecorded)
        #expect(b == .duplicate(of: a.sequence))
        // Within one group commit too.
        var third = failure(3)
        third.idempotencyKey = "k3"
        let batch = try await ledger.append(contentsOf: [third, third, failure(4)])
        #expect(batch[0].isRecorded && batch[1] == .duplicate(of: batch[0].sequence) && batch[2].isRecorded)
        let (head, acct2, keyed, byType) = try ledger.read { view in
            (
                try view.head().sequence, try (1...4).compactMap { try view.event($0) }.filter { $0.identifiers.accountID == "acct-2" },
                try view.sequence(forIdempotencyKey: "notification:jti-7"), try view.sequences(of: .transferIDExchangeFailed)
            )
        }
        #expect(head == 4)
        #expect(acct2.isEmpty)
        #expect(keyed == a.sequence)
        #expect(byType == [2, 3, 4])
        #expect(try ledger.verify().isIntact)
    }

    @Test("indexes find events by type, by recorded time, by idempotency key and a notification by its jti")
    func indexes() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        let outcomes = try await ledger.append(contentsOf: EventSamples.all())
        let notified = outcomes[EventType.allCases.firstIndex(of: .notificationReceived)!].sequence
        let exchanged = outcomes[EventType.allCases.firstIndex(of: .transferIDExchanged)!].sequence
        let (byJTI, unknownJTI, byKey, rejected, head, atHead, atZero) = try ledger.read { view in
            let head = try view.head()
            return (
                try view.sequence(ofNotification: "jti-1"), try view.sequence(ofNotification: "jti-2"),
                try view.sequence(forIdempotencyKey: "exchange:t.9f8e7d"),
                try view.sequences(of: .notificationRejected), head, try view.lastSequence(recordedAtOrBefore: head.recordedAt),
                try view.lastSequence(recordedAtOrBefore: Timestamp(microseconds: 0))
            )
        }
        #expect(byJTI == notified)
        #expect(unknownJTI == nil)
        #expect(byKey == exchanged)
        #expect(rejected.count == 1)
        #expect(atHead == head.sequence)
        #expect(atZero == 0)
    }

    @Test("the type index answers every range of sequences as a scan of the log does, across its pages")
    func typeIndexRanges() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        var generator = SystemRandomNumberGenerator()
        for chunk in 0..<6 {
            _ = try await ledger.append(
                contentsOf: (0..<1500).map { i in
                    Int.random(in: 0..<4, using: &generator) == 0
                        ? EventDraft(.userErased(UserErased(reason: "test", keysDestroyed: 0)), identifiers: Identifiers(accountID: "e\(chunk)-\(i)"))
                        : failure(chunk * 1500 + i)
                })
        }
        let head = try ledger.read { try $0.head().sequence }
        var types: [UInt64: EventType] = [:]
        try ledger.read { view in try view.forEachEvent(from: 1, through: head) { types[$0.sequence] = $0.type } }
        for (first, last) in [(UInt64(1), head), (2, 2), (17, 5000), (4097, 8191), (head, head), (head + 1, head + 9)] {
            for wanted in [Set([EventType.userErased]), [.transferIDExchangeFailed], [.userErased, .transferIDExchangeFailed, .ledgerCreated]] {
                var found: [UInt64] = []
                try ledger.read { view in try view.forEachSequence(ofAny: wanted, from: first, through: last) { found.append($0) } }
                let expected = types.keys.filter { $0 >= first && $0 <= last && wanted.contains(types[$0]!) }.sorted()
                #expect(found == expected, "\(wanted) from \(first) through \(last)")
            }
        }
        #expect(try ledger.read { try $0.sequences(of: .userErased) } == types.keys.filter { types[$0] == .userErased }.sorted())
    }

    @Test("idempotency keys whose hashes collide are told apart by the events' own keys")
    func idempotencyHashCollision() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        var first = failure(1)
        first.idempotencyKey = "k-first"
        let a = try await ledger.append(first)
        // File event a under the hash of another key too, as a collision of the two would.
        let colliding = LedgerSchema.idempotencyHash("k-other")
        _ = try ledger.environment.write { txn in try txn.put(ledger.schema.idempotency, key: colliding, value: BigEndian.bytes(a.sequence)) }
        #expect(try ledger.read { try $0.sequence(forIdempotencyKey: "k-other") } == nil)
        var other = failure(2)
        other.idempotencyKey = "k-other"
        let b = try await ledger.append(other)
        #expect(b.isRecorded && b.sequence != a.sequence)
        #expect(try ledger.read { try $0.sequence(forIdempotencyKey: "k-other") } == b.sequence)
        #expect(try ledger.read { try $0.sequence(forIdempotencyKey: "k-first") } == a.sequence)
        #expect(try await ledger.append(other) == .duplicate(of: b.sequence))
        _ = try ledger.environment.write { txn in try txn.delete(ledger.schema.idempotency, key: colliding, value: BigEndian.bytes(a.sequence)) }
        #expect(try ledger.verify().isIntact)
    }

    @Test("verify names the sequence number of a flipped byte")
    func flippedByteFound() async throws {
        let dir = TemporaryDirectory()
        let path = dir.sub("l")
        do {
            let ledger = try await Ledger.create(at: path, testIdentity())
            _ = try await ledger.append(contentsOf: (0..<300).map(failure))
            #expect(try ledger.verify().isIntact)
            ledger.close()
        }
        try flipByte(in: path, inRecordContaining: "\"acct-123\"")
        let ledger = try Ledger.open(at: path)
        defer { ledger.close() }
        let report = try ledger.verify()
        #expect(!report.isIntact)
        #expect(report.firstBadSequence == 125)
        #expect(report.eventCount == 124)
    }

    @Test("personal data is sealed: no plaintext email in the files; erasure keeps the chain verifying")
    func sealing() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        let subject = Identifier(.recipientSub, "001999.def.0789")
        let sealed = try await ledger.sealer.seal("jane.doe@example.org", for: subject)
        _ = try await ledger.append(
            EventDraft(
                .transferIDExchanged(TransferIDExchanged(email: sealed, isPrivateEmail: false)), identifiers: Identifiers(recipientSub: subject.value)
            ))
        #expect(try ledger.sealer.open(sealed) == "jane.doe@example.org")
        #expect(try !filesContain(dir.path, "jane.doe@example.org"))
        #expect(try ledger.sealer.requireKeyStore().destroyKeys(for: [subject]) == 1)
        #expect(try ledger.sealer.open(sealed) == nil)
        #expect(try ledger.verify().isIntact)
    }

    @Test("a batch's values sealed from one shared random source each open, under nonces that never repeat; an erased key seals nothing")
    func sealingABatch() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        let subjects = (0..<3).map { Identifier(.recipientSub, "001999.batch.\($0)") }
        var ids: [String] = []
        for subject in subjects { ids.append(try await ledger.sealer.requireKeyStore().dataKey(for: subject).id) }
        _ = try ledger.sealer.requireKeyStore().destroyKeys(for: [subjects[2]])
        let keys = try ledger.sealer.keys(ids: ids)
        // A small refill, so that the nonces cross refills of the source.
        var random = SecureRandom(refill: 20)
        var sealed: [SealedValue] = []
        for n in 0..<200 {
            let value = "user\(n)@privaterelay.appleid.com"
            sealed.append(try #require(try ledger.sealer.seal(value, keyID: ids[n % 2], with: keys, random: &random)))
        }
        #expect(try ledger.sealer.seal("gone@example.org", keyID: ids[2], with: keys, random: &random) == nil)
        for (n, value) in sealed.enumerated() { #expect(try ledger.sealer.open(value, with: keys) == "user\(n)@privaterelay.appleid.com") }
        // AES-GCM's combined form starts with its 12-byte nonce.
        let nonces = Set(sealed.map { Data(base64Encoded: $0.combined)!.prefix(12) })
        #expect(nonces.count == sealed.count)
        #expect(RowTree.newSalts(50).count == 50 && Set(RowTree.newSalts(50)).count == 50)
    }
    @Test("a missing, foreign or already-used directory gets a clear error")
    func clearErrors() async throws {
        let dir = TemporaryDirectory()
        #expect((#expect(throws: LedgerError.self) { try Ledger.open(at: dir.sub("nope")) })?.code == .missingLedger)
        _ = FileManager.default.createFile(atPath: dir.sub("x.txt"), contents: Data("hello".utf8))
        #expect((#expect(throws: LedgerError.self) { try Ledger.open(at: dir.path) })?.code == .notALedger)
        // An LMDB environment that is not a ledger.
        let foreign = dir.sub("foreign")
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        let env = try Environment(path: foreign)
        _ = try env.database("other")
        #expect((#expect(throws: LedgerError.self) { try Ledger.open(at: foreign) })?.code == .notALedger)
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        ledger.close()
        #expect((await #expect(throws: LedgerError.self) { try await Ledger.create(at: dir.sub("l"), testIdentity()) })?.code == .ledgerExists)
    }
}
