import Foundation
import Ledger
import LogEngine

extension Harness {
    /// A checkpoint file (`verify --checkpoint`, an evidence bundle's `checkpoint`) and the other
    /// signed notes read from a stranger's files: a manifest, a cosigned checkpoint, a
    /// consistency file. A checkpoint that parses is audited against a ledger twice: as it is,
    /// and signed afresh with the ledger's key, so that the consistency check sees its fields.
    static let checkpointNote = Harness(
        "checkpoint-note", "a checkpoint, signed note, cosigned checkpoint, handoff manifest or consistency file, read and checked"
    ) { input in
        let text = String(decoding: input, as: UTF8.self)
        var accepted = false
        if let note = try? SignedNote(parsing: input) {
            accepted = true
            HarnessCheck.expect(note.serialized.utf8.elementsEqual(input), "a signed note does not read back as its bytes")
            let key = FuzzFixtures.key("sender")
            _ = note.verify(name: note.signatures[0].name, publicKey: key.publicKey)
            _ = Cosignature.verified(in: note, name: note.signatures[0].name, publicKey: key.publicKey)
            _ = try? HandoffManifest(text: note.text)
        }
        if let submission = try? CheckpointSubmission(parsing: text) {
            accepted = true
            _ = try? Checkpoint(parsing: submission.checkpointText)
        }
        if let checkpoint = try? Checkpoint(parsing: text) {
            accepted = true
            HarnessCheck.expect(checkpoint.text == (text.hasSuffix("\n") ? text : text + "\n"), "a checkpoint does not read back as its text")
            let ledger = FuzzFixtures.senderLedger
            let key = FuzzFixtures.key("sender")
            _ = try? ledger.audit(checkpoint, publicKey: key.publicKey)
            let origin = (try? ledger.origin()) ?? checkpoint.origin
            if let resigned = try? Checkpoint(
                origin: origin, treeSize: checkpoint.treeSize, rootHash: checkpoint.rootHash, time: checkpoint.time, key: key)
            {
                _ = try? ledger.audit(resigned, publicKey: key.publicKey)
            }
        }
        if !accepted { throw HarnessRefusal() }
    }

    /// A C2SP tlog-proof file (an evidence bundle's, a receipt's): read, then checked against
    /// the checkpoint it carries.
    static let tlogProof = Harness("tlog-proof", "a tlog-proof file, read and its inclusion path checked against its checkpoint") { input in
        let proof = try TlogProof(parsing: String(decoding: input, as: UTF8.self))
        HarnessCheck.expect((try? TlogProof(parsing: proof.text)) == proof, "a tlog-proof does not read back as what it wrote")
        let checkpoint = try Checkpoint(parsing: proof.checkpointText)
        _ = MerkleProof.verifyInclusion(
            leafHash: MerkleHash.leaf([]), index: proof.index, treeSize: checkpoint.treeSize, path: proof.path, root: checkpoint.rootHash)
    }

    /// A pinned verifier key file (`--sender-key`, `--recipient-key`, `checkpoint.pub`, a
    /// bundle's `verifier-key`).
    static let verifierKey = Harness("verifier-key", "a verifier key file, as the pinned keys and checkpoint.pub are read") { input in
        let dir = FuzzWorkspace.files("verifier-key", [("key.pub", input)])
        let key = try VerifierKey.read(from: dir + "/key.pub")
        let again = Checkpoint.publicKey(fromVerifierKey: key.line)
        HarnessCheck.expect(again?.name == key.name && again?.key == key.publicKey, "a verifier key's line gives another key")
    }
}
