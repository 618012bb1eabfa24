import Foundation
import Ledger
import Migration
import Projections

extension Harness {
    /// Team B's receipt, as team A's `handoff confirm` checks it against its own ledger (the
    /// fixture sender, a copy): `cosigned-checkpoint.txt`, `handoff-received.json` and
    /// `handoff-received.tlog-proof`. Team B holds the key that signs its checkpoints and
    /// cosignatures, so the harness signs them (the fixture recipient's key, under the origin
    /// the proof's checkpoint names): what the fuzzer writes is what B could have signed.
    static let handoffReceipt = Harness("handoff-receipt", "team B's receipt (cosigned checkpoint, event, proof), checked and recorded by team A's confirm") { input in
        let parts = FuzzInput(input, parts: 3)
        let key = FuzzFixtures.key("recipient")
        let event = parts[1]
        var proofFile = parts[2]
        var origin = ""
        if let proof = try? TlogProof(parsing: String(decoding: parts[2], as: UTF8.self)),
           let checkpoint = try? Checkpoint(parsing: proof.checkpointText),
           let root = MerkleProof.root(leafHash: MerkleHash.leaf(event), index: proof.index, treeSize: checkpoint.treeSize, path: proof.path),
           let signed = try? Checkpoint(origin: checkpoint.origin, treeSize: checkpoint.treeSize, rootHash: root, time: checkpoint.time, key: key) {
            origin = checkpoint.origin
            proofFile = Array(TlogProof(index: proof.index, path: proof.path, checkpointText: signed.text).text.utf8)
        }
        let cosigned = FuzzSigning.cosigned(parts[0], name: origin, key: key)
        let dir = FuzzWorkspace.files("handoff-receipt", [(HandoffReceipt.cosignedFile, cosigned), (HandoffReceipt.eventFile, event), (HandoffReceipt.proofFile, proofFile)])
        let confirmation = ReceiptConfirmation(ledger: FuzzFixtures.senderLedgerForWrites, recipientKey: VerifierKey(name: origin, publicKey: key.publicKey))
        let outcome = try blocking { try await confirmation.confirm(dir) }
        HarnessCheck.expect(outcome.acknowledged.cosignedAt.isRepresentable, "a receipt was recorded with a cosignature time RFC 3339 cannot write")
    }
}
