import Basics
import Foundation
import Ledger
import LogEngine
import Logging
import Projections
import Synchronization
import Witnessing

extension Harness {
    /// An add-checkpoint request to `serve`'s witness (c2sp.org/tlog-witness), from anyone who
    /// can reach it. The witness witnesses the sender fixture's log, so the seeds (that log's
    /// checkpoints and consistency files) pass the signature and reach the state checks.
    static let witnessRequest = Harness(
        "witness-request", "an add-checkpoint request body to serve's witness, checked and answered as tlog-witness says"
    ) { input in
        let witness = WitnessFixture.next()
        let answer = try blocking { await witness.addCheckpoint(input) }
        HarnessCheck.expect(
            [200, 400, 403, 404, 409, 422].contains(answer.status), "the witness answered \(answer.status): \(answer.body)")
        guard answer.status == 200 else { throw HarnessRefusal() }
        // A cosignature only for a checkpoint the log signed, and one that verifies.
        let text = String(decoding: input, as: UTF8.self)
        let request = try CheckpointSubmission(parsing: text)
        let note = try SignedNote(parsing: Array((request.checkpointText + answer.body).utf8))
        let log = WitnessFixture.log
        HarnessCheck.expect(note.verify(name: log.name, publicKey: log.publicKey) == .verified, "a cosignature for a checkpoint the log did not sign")
        HarnessCheck.expect(
            Cosignature.verified(in: note, name: witness.name, publicKey: FuzzFixtures.key("recipient").publicKey) != nil,
            "the witness's cosignature does not verify")
    }

    /// A witness's answer to `handover witness`: the first byte picks the status, the second
    /// the content type, the rest is the body; a 200 body is read as cosignature lines of the
    /// sender fixture's latest checkpoint.
    static let witnessAnswer = Harness("witness-answer", "a witness's HTTP answer to an add-checkpoint, read as tlog-witness says") { input in
        let statuses = [200, 409, 422, 400, 403, 404, 429, 500, 503, 302, 100]
        let status = statuses[Int(input.first ?? 0) % statuses.count]
        let types = ["text/x.tlog.size", "text/plain; charset=utf-8", "TEXT/X.TLOG.SIZE ; q=1", ""]
        let type = types[Int(input.dropFirst().first ?? 0) % types.count]
        let body = Array(input.dropFirst(2))
        let checkpoint = WitnessFixture.checkpoint
        let answer = WitnessAnswer(
            status: status, contentType: type, body: body, checkpoint: checkpoint, key: WitnessFixture.witnessKey, now: 1_800_000_000)
        switch answer {
        case .cosigned(let line, let timestamp):
            HarnessCheck.expect(status == 200, "a cosignature read from a \(status)")
            let note = try SignedNote(parsing: Array((checkpoint.text + line.line).utf8))
            let verified = Cosignature.verified(in: note, name: WitnessFixture.witnessKey.name, publicKey: WitnessFixture.witnessKey.publicKey)
            HarnessCheck.expect(verified?.timestamp == timestamp, "a cosignature that does not verify was taken")
        case .conflict(let size):
            HarnessCheck.expect(status == 409 && size < 1 << 63, "a size read from a \(status)")
        default: throw HarnessRefusal()
        }
    }

    /// A witness policy file (`evidence write` and `evidence verify --witness-policy`, a bundle's
    /// `witness-policy.json`): written back, it reads the same; counted against a cosigned
    /// checkpoint, never more cosigners than it lists.
    static let witnessPolicy = Harness("witness-policy", "a witness policy file, read, written back and counted against a cosigned checkpoint") {
        input in
        let policy = try WitnessPolicy(json: input)
        HarnessCheck.expect((try? WitnessPolicy(json: policy.json)) == policy, "a witness policy does not read back as it was written")
        let note = try SignedNote(parsing: Array((WitnessFixture.checkpoint.text + WitnessFixture.cosignatureLine).utf8))
        let cosigners = policy.cosigners(in: note)
        HarnessCheck.expect(
            cosigners.count <= 1 && cosigners.allSatisfy { $0.publicKey == WitnessFixture.witnessKey.publicKey },
            "a cosigner counted that did not cosign")
    }

    /// A ledger's `witnesses` file, as `handover witness` reads it: written back, it reads the same.
    static let witnessList = Harness("witness-list", "a ledger's witnesses file, read and written back") { input in
        let dir = FuzzWorkspace.files("witness-list", [(WitnessList.fileName, input)])
        let list = try WitnessList.read(in: dir)
        try list.write(in: dir)
        HarnessCheck.expect((try? WitnessList.read(in: dir)) == list, "a witness list does not read back as it was written")
    }
}

/// The witness the request harness drives: a ledger of its own (remade every
/// ``inputsPerLedger`` inputs), cosigning with the recipient fixture's key, witnessing the
/// sender fixture's log.
enum WitnessFixture {
    static let inputsPerLedger = 20_000

    /// The sender fixture's log: its origin and checkpoint key.
    static let log: VerifierKey = {
        do { return VerifierKey(name: try FuzzFixtures.senderLedger.origin(), publicKey: FuzzFixtures.key("sender").publicKey) } catch {
            fatalError("the sender fixture has no origin: \(error)")
        }
    }()

    /// The sender fixture's latest checkpoint.
    static let checkpoint: Checkpoint = {
        do {
            guard let checkpoint = try FuzzFixtures.senderLedger.latestCheckpoint() else { fatalError("the sender fixture has no checkpoint") }
            return checkpoint
        } catch { fatalError("the sender fixture's checkpoint cannot be read: \(error)") }
    }()

    /// A witness key the answers are checked with: the recipient fixture's, as a cosigner.
    static let witnessKey: WitnessKey = {
        let key = FuzzFixtures.key("recipient").publicKey
        guard let witness = WitnessKey(verifierKey: Cosignature.verifierKey(name: "witness.fuzz/w1", publicKey: key)) else {
            fatalError("the recipient fixture's key makes no cosigner key")
        }
        return witness
    }()

    /// The witness key's cosignature line of ``checkpoint``.
    static let cosignatureLine: String = {
        do {
            return try Cosignature.sign(checkpoint, name: witnessKey.name, key: FuzzFixtures.key("recipient"), timestamp: 1_790_000_000).line
        } catch { fatalError("cannot cosign the fixture's checkpoint: \(error)") }
    }()

    private static let state = Mutex<(witness: CheckpointWitness, ledger: Ledger, inputs: Int, generation: Int)?>(nil)

    /// The witness for the next input.
    static func next() -> CheckpointWitness {
        state.withLock { state in
            if let current = state, current.inputs < inputsPerLedger {
                state!.inputs += 1
                return current.witness
            }
            state?.ledger.close()
            let generation = (state?.generation ?? 0) + 1
            let directory = FuzzWorkspace.fresh("witness") + "/ledger-\(generation)"
            var quiet = Logger(label: "handover.fuzz")
            quiet.logLevel = .critical
            do {
                let ledger = try blocking {
                    try await Ledger.create(
                        at: directory,
                        LedgerCreated(teamID: "BBBB222222", clientIDs: ["com.example.notes"], role: .recipient, ledgerID: "fuzz-witness"),
                        folders: [UserProjection()])
                }
                let witness = try CheckpointWitness(ledger: ledger, key: FuzzFixtures.key("recipient"), logs: [log], logger: quiet)
                state = (witness, ledger, 1, generation)
                return witness
            } catch {
                fatalError("cannot make the witness fixture: \(error)")
            }
        }
    }
}
