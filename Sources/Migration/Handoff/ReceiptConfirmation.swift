import Basics
import Foundation
import Ledger
import LogEngine

/// Team A's last step of a signed handoff: checks team B's receipt against the pinned
/// recipient key and this ledger's issued packages, and records "handoff acknowledged" once.
public struct ReceiptConfirmation: Sendable {
    public let ledger: Ledger
    /// The pinned recipient verifier key: its name (the recipient ledger's origin) and raw Ed25519 key.
    public let recipientKey: VerifierKey

    public init(ledger: Ledger, recipientKey: VerifierKey) {
        self.ledger = ledger
        self.recipientKey = recipientKey
    }

    /// What a confirmation did.
    public struct Outcome: Sendable {
        public var acknowledged: HandoffAcknowledged
        /// The "handoff acknowledged" event, new or recorded by an earlier confirmation.
        public var sequence: UInt64
        public var wasRecordedBefore: Bool
    }

    /// Checks the receipt in `directory` and records it; throws a ``HandoffRefusal`` when a check fails.
    public func confirm(_ directory: String) async throws -> Outcome {
        func refuse(_ reason: HandoffRefusal.Reason, _ detail: String) -> HandoffRefusal { HandoffRefusal(reason, detail, subject: .receipt) }
        let receipt: HandoffReceipt
        do { receipt = try HandoffReceipt(readingFrom: directory) } catch { throw refuse(.malformed, ErrorText.describing(error)) }

        // The recipient's checkpoint, by its pinned key, and its event inside it.
        let theirs: Checkpoint
        do { theirs = try Checkpoint(parsing: receipt.proof.checkpointText) } catch { throw refuse(.malformed, ErrorText.describing(error)) }
        let pinned = recipientKey.line
        guard theirs.origin == recipientKey.name, theirs.isSigned(by: recipientKey.publicKey) else {
            throw refuse(
                .recipientCheckpoint,
                "the receipt's checkpoint (of \(InertText.forScreen(theirs.origin))) does not verify with the pinned recipient key \(pinned)")
        }
        guard
            MerkleProof.verifyInclusion(
                leafHash: MerkleHash.leaf(receipt.event), index: receipt.proof.index, treeSize: theirs.treeSize,
                path: receipt.proof.path, root: theirs.rootHash)
        else {
            throw refuse(
                .inclusionProof,
                "\(HandoffReceipt.eventFile) is not leaf \(receipt.proof.index) of the recipient's signed checkpoint of \(theirs.treeSize) events")
        }
        // Its type first: only a "handoff received" body is read further.
        let event: RecordedEvent
        do {
            let envelope = try receipt.event.withUnsafeBytes { try EventEnvelope(json: $0) }
            guard envelope.type == .handoffReceived, envelope.sequence == receipt.proof.index + 1 else {
                throw refuse(
                    .malformed,
                    "\(HandoffReceipt.eventFile) is event \(envelope.sequence), a \(envelope.type.rawValue) event, not the recipient's \"handoff received\" at leaf \(receipt.proof.index)"
                )
            }
            event = try receipt.event.withUnsafeBytes { try RecordedEvent(json: $0) }
        } catch let refusal as HandoffRefusal { throw refusal } catch {
            throw refuse(.malformed, "\(HandoffReceipt.eventFile): \(ErrorText.describing(error))")
        }
        guard case .handoffReceived(let received) = event.body else {
            throw refuse(.malformed, "\(HandoffReceipt.eventFile) is not a \"handoff received\" event")
        }

        // The package it names, issued here, and the recipient's cosignature on its checkpoint.
        let issued = try ledger.read { try $0.handoffsIssued() }.first { $0.body.manifestSHA256.utf8.elementsEqual(received.manifestSHA256.utf8) }?
            .body
        guard let issued else {
            throw refuse(
                .unknownPackage, "the receipt acknowledges manifest \(InertText.forScreen(received.manifestSHA256)), which this ledger never issued")
        }
        guard recipientKey.name.utf8.starts(with: "handover/\(issued.targetTeam)/".utf8) else {
            throw refuse(
                .recipientCheckpoint,
                "package \(issued.package) was issued to team \(issued.targetTeam), but the pinned recipient key is of \(recipientKey.name)")
        }
        let ours = try issued.checkpoint.checkpoint()
        let theirRecord: Checkpoint
        do { theirRecord = try received.checkpoint.checkpoint() } catch { throw refuse(.malformed, ErrorText.describing(error)) }
        guard theirRecord.text.utf8.elementsEqual(ours.text.utf8) else {
            throw refuse(.unknownPackage, "the recipient recorded another checkpoint for package \(issued.package) than the one issued")
        }
        // Exactly the checkpoint as issued, with this ledger's own line, then one cosignature.
        let cosigned = receipt.cosignedCheckpoint
        guard cosigned.text.utf8.elementsEqual(ours.body.utf8), cosigned.signatures.count == 2,
            cosigned.signatures[0].line.utf8.elementsEqual(
                SignedNote.Signature(name: ours.origin, keyID: ours.keyID, bytes: ours.signature).line.utf8)
        else {
            throw refuse(
                .cosignature,
                "\(HandoffReceipt.cosignedFile) is not package \(issued.package)'s checkpoint as issued, with its signature line and one cosignature after it"
            )
        }
        guard let (timestamp, line) = Cosignature.verified(in: receipt.cosignedCheckpoint, name: recipientKey.name, publicKey: recipientKey.publicKey)
        else {
            throw refuse(
                .cosignature,
                "no cosignature in \(HandoffReceipt.cosignedFile) verifies with the pinned recipient key \(Cosignature.verifierKey(name: recipientKey.name, publicKey: recipientKey.publicKey))"
            )
        }

        guard let cosignedAt = Timestamp(checkedSeconds: Int64(timestamp)) else {
            throw refuse(.cosignature, "the cosignature's timestamp \(timestamp) is not a time of years 0000 to 9999")
        }
        let acknowledged = HandoffAcknowledged(
            package: issued.package, targetTeam: issued.targetTeam, manifestSHA256: issued.manifestSHA256,
            recipientSequence: Int(event.sequence), recipientCheckpoint: CheckpointFields(theirs),
            cosignedAt: cosignedAt,
            cosignature: Data(line.keyID + line.bytes).base64EncodedString())
        let outcome = try await ledger.append(
            EventDraft(.handoffAcknowledged(acknowledged), idempotencyKey: "handoff-acknowledged:" + issued.manifestSHA256))
        return Outcome(acknowledged: acknowledged, sequence: outcome.sequence, wasRecordedBefore: !outcome.isRecorded)
    }
}
