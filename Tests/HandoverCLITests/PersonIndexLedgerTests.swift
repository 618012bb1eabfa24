import Foundation
import LMDB
import LogEngine
import TestSupport
import Testing

@testable import Ledger
@testable import Projections

/// The person index as a projection of the log: recomputed by `verify --deep`, built by the
/// upgrade of a ledger written before it (resumably), and bound to the log, so that a log
/// rewritten to drop a person's event is caught by a witness and by a bundle kept from before.
@Suite("the person index in the ledger", .serialized)
struct PersonIndexLedgerTests {
    let dir = TemporaryDirectory()

    /// A lab ledger of `count` exchanges (plus "ledger created").
    private func labLedger(_ name: String, count: Int) throws -> String {
        let path = dir.sub(name)
        let r = try runProduct("handover-lab", ["append", "--ledger", path, "--count", "\(count)", "--prefix", name, "--create"])
        try #require(r.status == 0, "\(r.err)")
        return path
    }

    @Test(
        "verify --deep refuses a ledger whose stored index was altered, or whose committed root is not the one its events give; projections rebuild mends the first"
    )
    func deepVerifyRefusesAlteredIndex() async throws {
        let path = try labLedger("l", count: 200)
        #expect(try handover("checkpoint", "--ledger", path).status == 0)
        var r = try handover("verify", "--ledger", path, "--deep")
        #expect(r.status == 0 && r.out.contains("OK: the person index (600 names over 201 events) and 1 committed root equal"), "\(r.out)\(r.err)")

        // One byte of one name's stored history: the last of the chain in a record's first slot
        // holding a name (nibble, 0, label, count, chain).
        let altered = dir.sub("altered")
        try FileManager.default.copyItem(atPath: path, toPath: altered)
        try Environment(path: altered).write { txn in
            let database = try txn.openDatabase("person_index", create: false)
            let (key, value) = try #require(
                try txn.withCursor(database) { cursor in
                    var entry = try cursor.seek(atLeast: [UInt8(ascii: "S")])
                    while let (_, value) = entry, value[1] != 0 { entry = try cursor.next() }
                    return entry.map { (Array($0.0), Array($0.1)) }
                })
            var changed = value
            changed[73] ^= 1
            _ = try txn.put(database, key: key, value: changed)
        }
        r = try handover("verify", "--ledger", altered, "--deep")
        #expect(
            r.status == 4
                && r.err.contains(
                    "the person index differs from what the log implies: the stored index over the first 201 events differs from the one they give: the stored history of label"
                ), "\(r.out)\(r.err)")
        r = try handover("projections", "rebuild", "--ledger", altered)
        #expect(r.status == 0 && r.out.contains("Rebuilt the person index (600 names) from 202 events"), "\(r.out)\(r.err)")
        r = try handover("verify", "--ledger", altered, "--deep")
        #expect(r.status == 0, "\(r.out)\(r.err)")

        // A commit of a root the events do not give, in a log whose chain and tree hold.
        let forged = dir.sub("forged")
        try FileManager.default.copyItem(atPath: path, toPath: forged)
        let ledger = try Ledger.open(at: forged, folders: [UserProjection()])
        _ = try await ledger.append(
            EventDraft(
                .personIndexCommitted(PersonIndexCommitted(indexedSize: 202, root: String(repeating: "ab", count: 32), names: 600)),
                idempotencyKey: PersonIndexCommitted.idempotencyKey(indexedSize: 202)))
        ledger.close()
        #expect(try handover("verify", "--ledger", forged).status == 0, "the log itself verifies")
        r = try handover("verify", "--ledger", forged, "--deep")
        #expect(
            r.status == 4 && r.err.contains("event 203 gives the person index over the first 202 events the root abab"),
            "\(r.out)\(r.err)")
    }

    @Test(
        "a log rewritten without one person's event, its index rebuilt and signed again with the same key: the witness that cosigned the original refuses it (exit 4), and so does the checkpoint of a bundle kept from the original"
    )
    func rewrittenLogCaught() async throws {
        let original = try labLedger("a", count: 120)
        let witnessLedger = try labLedger("w", count: 3)
        let originalKey = dir.sub("a.pub")
        try handover("checkpoint", "--public-key", "--ledger", original).out.write(toFile: originalKey, atomically: true, encoding: .utf8)
        let witnessKey = try handover("witness", "key", "--ledger", witnessLedger).out.trimmingCharacters(in: .whitespacesAndNewlines)
        var server = try ServerProcess(["serve", "--ledger", witnessLedger, "--port", "0", "--witness-log", originalKey])
        #expect(try handover("witness", "add", server.baseURL + "/witness", "--key", witnessKey, "--ledger", original).status == 0)
        #expect(try handover("checkpoint", "--ledger", original).status == 0)
        var round = try handover("witness", "--ledger", original)
        _ = server.finish()
        try #require(round.status == 0, "\(round.out)\(round.err)")
        let bundle = dir.sub("bundle")
        let written = try handover("evidence", "a-7", "--ledger", original, "--out", bundle)
        try #require(written.status == 0 && written.out.contains("Complete: "), "\(written.out)\(written.err)")

        // The same ledger written again without a-7's first event, with the same key.
        let rewritten = dir.sub("rewritten")
        let old = try Ledger.open(at: original, options: .init(access: .readOnly))
        let (identity, drafts, dropped) = try old.read { view -> (LedgerCreated, [EventDraft], UInt64) in
            var drafts: [EventDraft] = []
            var dropped: UInt64 = 0
            for seq in 2...(try view.head().sequence) {
                let event = try #require(try view.event(seq))
                if case .personIndexCommitted = event.body { continue }
                if case .witnessCosigned = event.body { continue }
                if dropped == 0, event.identifiers.accountID == "a-7" {
                    dropped = seq
                    continue
                }
                drafts.append(
                    EventDraft(
                        event.body, identifiers: event.identifiers, occurredAt: event.occurredAt, idempotencyKey: event.idempotencyKey,
                        runID: event.actor.runID))
            }
            return (try old.identity(), drafts, dropped)
        }
        old.close()
        #expect(dropped > 0)
        let ledger = try await Ledger.create(at: rewritten, identity, folders: [UserProjection()])
        _ = try await ledger.append(contentsOf: drafts)
        ledger.close()
        for file in [CheckpointKey.fileName, VerifierKeyFile.fileName, WitnessList.fileName] {
            try? FileManager.default.removeItem(atPath: rewritten + "/" + file)
            try FileManager.default.copyItem(atPath: original + "/" + file, toPath: rewritten + "/" + file)
        }
        #expect(try handover("checkpoint", "--ledger", rewritten).status == 0)
        server = try ServerProcess(["serve", "--ledger", witnessLedger, "--port", "0", "--witness-log", originalKey])
        // The witness is at the same URL only by its port: name it again.
        let witnesses = try String(contentsOfFile: rewritten + "/" + WitnessList.fileName, encoding: .utf8)
        try witnesses.replacingOccurrences(
            of: #"http://127\.0\.0\.1:\d+"#, with: server.baseURL.replacingOccurrences(of: "/witness", with: ""), options: .regularExpression
        )
        .write(toFile: rewritten + "/" + WitnessList.fileName, atomically: true, encoding: .utf8)
        round = try handover("witness", "--ledger", rewritten)
        _ = server.finish()
        #expect(round.status == 4, "the witness refuses the rewritten log: \(round.out)\(round.err)")
        let audit = try handover("verify", "--ledger", rewritten, "--checkpoint", bundle + "/checkpoint", "--public-key", originalKey)
        #expect(audit.status == 4, "the bundle's checkpoint does not hold in the rewritten log: \(audit.out)\(audit.err)")
    }

    @Test(
        "a ledger written before the person index (its database dropped) gets it from the upgrade, killed at random moments and run again until done; it then verifies deep and proves a bundle complete"
    )
    func upgradeBuildsTheIndexResumably() throws {
        let path = try labLedger("u", count: TestSize.pick(quick: 20_000, full: 60_000))
        try Environment(path: path).write { txn in try txn.drop(try txn.openDatabase("person_index", create: false)) }
        #expect(try handover("verify", "--ledger", path, "--deep").out.contains("has no person index yet"))
        var kills = 0
        var done = false
        var generator = SystemRandomNumberGenerator()
        for attempt in 0..<12 where !done {
            let upgrade = try RunningProduct("handover", ["upgrade", "--ledger", path])
            if attempt < 11 {
                usleep(UInt32.random(in: 50_000...900_000, using: &generator))
                upgrade.signal(SIGKILL)
            }
            let result = upgrade.wait()
            if result.signalled { kills += 1 } else { done = result.status == 0 }
        }
        #expect(done, "the upgrade finished after \(kills) kills")
        let r = try handover("verify", "--ledger", path, "--deep")
        #expect(r.status == 0 && r.out.contains("OK: the person index"), "\(r.out)\(r.err)")
        #expect(try handover("checkpoint", "--ledger", path).status == 0)
        let bundle = dir.sub("upgraded-bundle")
        let written = try handover("evidence", "u-11", "--ledger", path, "--out", bundle)
        #expect(written.status == 0 && written.out.contains("Complete: "), "\(written.out)\(written.err)")
    }
}
