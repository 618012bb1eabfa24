import Crypto
import Foundation
import Ledger

/// A handoff package that passed every check against the pinned sender key.
public struct VerifiedHandoff: Sendable {
    public var package: HandoffPackage
    public var manifest: HandoffManifest
    /// SHA-256 of `manifest.txt`, hex.
    public var manifestSHA256: String
    /// `rows.csv` exactly as checked: what the exchange reads, so the file cannot change in between.
    public var rows: [UInt8]
    /// This package's "handoff received" event, once recorded (or found recorded before).
    public var receivedSequence: UInt64?
    /// Whether it had been received before (a resumed exchange).
    public var wasReceivedBefore = false
}

/// Team B's side of a signed handoff: checks a package before any call to Apple (the
/// manifest's signature by the pinned key, the rows' digest, the target, the sender's
/// checkpoint, consistency with the previous package), records "handoff received" or
/// "handoff refused", and writes the receipt that goes back to team A.
public struct HandoffAcceptance: Sendable {
    public let ledger: Ledger
    public let package: HandoffPackage
    /// The pinned sender verifier key: its name (the sender ledger's origin) and raw Ed25519 key.
    public let senderKey: VerifierKey

    public init(ledger: Ledger, package: HandoffPackage, senderKey: VerifierKey) {
        self.ledger = ledger
        self.package = package
        self.senderKey = senderKey
    }

    /// Checks the package and records the outcome: "handoff received" once per package (a
    /// package received before is accepted again without a new event), or "handoff refused"
    /// with the reason, then throws the ``HandoffRefusal``. With `record` false nothing is written.
    public func accept(record: Bool = true) async throws -> VerifiedHandoff {
        var manifestSHA256: String?
        do {
            var verified = try check(manifestDigest: &manifestSHA256)
            guard record else { return verified }
            let key = HandoffAcceptance.idempotencyKey(manifestSHA256: verified.manifestSHA256)
            if let sequence = try ledger.read({ try $0.sequence(forIdempotencyKey: key) }) {
                verified.receivedSequence = sequence
                verified.wasReceivedBefore = true
                return verified
            }
            let manifest = verified.manifest
            let received = HandoffReceived(senderTeam: manifest.senderTeam, package: manifest.package, rowCount: manifest.rowCount, rowsSHA256: manifest.rowsSHA256,
                                           manifestSHA256: verified.manifestSHA256, packagePath: package.path, checkpoint: CheckpointFields(manifest.checkpoint))
            let outcome = try await ledger.append(EventDraft(.handoffReceived(received), idempotencyKey: key))
            verified.receivedSequence = outcome.sequence
            verified.wasReceivedBefore = !outcome.isRecorded
            return verified
        } catch let refusal as HandoffRefusal {
            if record {
                _ = try await ledger.append(EventDraft(.handoffRefused(HandoffRefused(
                    reason: refusal.reason.rawValue, detail: refusal.detail, packagePath: package.path, manifestSHA256: manifestSHA256, senderKeyName: senderKey.name))))
            }
            throw refusal
        }
    }

    /// The idempotency key of a package's "handoff received" event.
    static func idempotencyKey(manifestSHA256: String) -> String { "handoff-received:" + manifestSHA256 }

    /// Every check, in order; the first that fails is the refusal.
    private func check(manifestDigest: inout String?) throws -> VerifiedHandoff {
        func refuse(_ reason: HandoffRefusal.Reason, _ detail: String) -> HandoffRefusal { HandoffRefusal(reason, detail) }
        func malformed(_ error: Error) -> HandoffRefusal { refuse(.malformed, ErrorText.describing(error)) }

        let manifestBytes: [UInt8]
        do { manifestBytes = try package.read(HandoffPackage.manifestFile, limit: HandoffPackage.maximumNoteBytes) } catch { throw malformed(error) }
        let manifestSHA256 = Hex.encode(SHA256.hash(data: manifestBytes))
        manifestDigest = manifestSHA256
        let note: SignedNote
        do { note = try SignedNote(parsing: manifestBytes) } catch { throw malformed(error) }
        let pinned = senderKey.line
        switch note.verify(name: senderKey.name, publicKey: senderKey.publicKey) {
        case .verified: break
        case .notSignedByKey:
            let signers = note.signatures.map { "\(InertText.forScreen($0.name)) (key ID \(Hex.encode($0.keyID)))" }.joined(separator: ", ")
            throw refuse(.notSignedByPinnedKey, "the manifest is signed by \(signers), not by the pinned sender key \(pinned)")
        case .invalid:
            throw refuse(.manifestSignature, "the manifest's signature by the pinned sender key does not verify: the manifest was changed after it was signed")
        }
        let manifest: HandoffManifest
        do { manifest = try HandoffManifest(text: note.text) } catch { throw malformed(error) }
        let checkpoint = manifest.checkpoint

        guard checkpoint.origin == senderKey.name else {
            throw refuse(.checkpointFromAnotherLedger, "the manifest's checkpoint is of \(InertText.forScreen(checkpoint.origin)), the pinned sender key is \(senderKey.name)'s")
        }
        guard checkpoint.origin.hasPrefix("handover/\(manifest.senderTeam)/") else {
            throw refuse(.checkpointFromAnotherLedger, "the manifest names sender team \(InertText.forScreen(manifest.senderTeam)), its checkpoint is of \(checkpoint.origin)")
        }
        guard checkpoint.isSigned(by: senderKey.publicKey) else {
            throw refuse(.checkpointSignature, "the checkpoint in the manifest does not verify with the pinned sender key \(pinned)")
        }
        let identity = try ledger.identity()
        guard manifest.targetTeam == identity.teamID else {
            throw refuse(.wrongTarget, "the package is for team \(InertText.forScreen(manifest.targetTeam)), this ledger is team \(identity.teamID)'s")
        }
        guard !Set(manifest.clientIDs).isDisjoint(with: identity.clientIDs) else {
            throw refuse(.wrongClient, "the package is for client \(manifest.clientIDs.map(InertText.forScreen).joined(separator: ", ")), this ledger is for \(identity.clientIDs.joined(separator: ", "))")
        }

        let rows = try checkRows(manifest, refuse)

        let submission: CheckpointSubmission
        do {
            let bytes = try package.read(HandoffPackage.consistencyFile, limit: HandoffPackage.maximumNoteBytes)
            submission = try CheckpointSubmission(parsing: String(decoding: bytes, as: UTF8.self))
        } catch { throw malformed(error) }
        guard submission.checkpointText == checkpoint.text else {
            throw refuse(.malformed, "\(HandoffPackage.consistencyFile) holds another checkpoint than the manifest")
        }
        guard submission.oldSize == manifest.previousTreeSize else {
            throw refuse(.previousMismatch, "\(HandoffPackage.consistencyFile) proves from size \(submission.oldSize), the manifest's previous package ends at \(manifest.previousTreeSize)")
        }
        try checkSequence(manifest, manifestSHA256: manifestSHA256, proof: submission.proof, refuse)
        return VerifiedHandoff(package: package, manifest: manifest, manifestSHA256: manifestSHA256, rows: rows)
    }

    /// The rows file: its digest, its columns, its count, and each event within the checkpoint.
    private func checkRows(_ manifest: HandoffManifest, _ refuse: (HandoffRefusal.Reason, String) -> HandoffRefusal) throws -> [UInt8] {
        let bytes: [UInt8]
        do { bytes = try package.read(HandoffPackage.rowsFile) } catch { throw refuse(.malformed, ErrorText.describing(error)) }
        let digest = Hex.encode(SHA256.hash(data: bytes))
        guard digest == manifest.rowsSHA256 else {
            throw refuse(.rowsDigest, "\(HandoffPackage.rowsFile) hashes to \(digest), the manifest says \(manifest.rowsSHA256): a row was changed, removed or added")
        }
        let table: CSVTable
        do { table = try CSVTable(bytes: bytes, file: package.file(HandoffPackage.rowsFile)) } catch { throw refuse(.rowsMismatch, ErrorText.describing(error)) }
        guard table.header == HandoffPackage.rowColumns else {
            throw refuse(.rowsMismatch, "\(HandoffPackage.rowsFile)'s columns are not \(HandoffPackage.rowColumns.joined(separator: ","))")
        }
        guard table.rows.count == manifest.rowCount else {
            throw refuse(.rowsMismatch, "\(HandoffPackage.rowsFile) has \(table.rows.count) rows, the manifest says \(manifest.rowCount)")
        }
        let after = manifest.previousTreeSize, through = manifest.checkpoint.treeSize
        for row in table.rows {
            guard let sequence = row["seq"].flatMap(UInt64.init), sequence > after, sequence <= through else {
                throw refuse(.notCovered, "line \(row.line) lists event \(InertText.forScreen(row["seq"] ?? "")), outside the events \(after + 1) to \(through) this package's checkpoint adds")
            }
        }
        return bytes
    }

    /// This package against the ones received before from the same sender: a new number, the
    /// next one, naming the previous manifest, and a log that only grew since its checkpoint.
    private func checkSequence(_ manifest: HandoffManifest, manifestSHA256: String, proof: [[UInt8]],
                               _ refuse: (HandoffRefusal.Reason, String) -> HandoffRefusal) throws {
        let received = try HandoffAcceptance.received(from: senderKey.name, in: ledger)
        if let same = received[manifest.package] {
            guard same.manifestSHA256 == manifestSHA256 else {
                throw refuse(.conflictingPackage, "package \(manifest.package) from \(senderKey.name) was received before with manifest \(same.manifestSHA256); this one's is \(manifestSHA256)")
            }
            return
        }
        guard manifest.package > 1 else {
            guard manifest.previousTreeSize == 0 else { throw refuse(.previousMismatch, "package 1 says a previous package ended at \(manifest.previousTreeSize) events") }
            return
        }
        guard let previous = received[manifest.package - 1] else {
            throw refuse(.outOfOrder, "package \(manifest.package - 1) from \(senderKey.name) has not been received; exchange it first")
        }
        guard manifest.previousManifestSHA256 == previous.manifestSHA256, UInt64(previous.checkpoint.treeSize) == manifest.previousTreeSize else {
            throw refuse(.previousMismatch, "the manifest follows package \(manifest.package - 1) with manifest \(manifest.previousManifestSHA256 ?? "-") at \(manifest.previousTreeSize) events; "
                         + "the one received has manifest \(previous.manifestSHA256) at \(previous.checkpoint.treeSize) events")
        }
        let old: Checkpoint
        do { old = try previous.checkpoint.checkpoint() } catch { throw refuse(.malformed, ErrorText.describing(error)) }
        guard MerkleProof.verifyConsistency(oldSize: old.treeSize, oldRoot: old.rootHash, newSize: manifest.checkpoint.treeSize,
                                            newRoot: manifest.checkpoint.rootHash, proof: proof) else {
            throw refuse(.logRewritten, "the consistency proof from package \(manifest.package - 1)'s checkpoint (\(old.treeSize) events) to this one's "
                         + "(\(manifest.checkpoint.treeSize)) does not verify: the sender's log was rewritten between the two packages")
        }
    }

    /// The packages recorded as received from the sender ledger `origin`, by number.
    static func received(from origin: String, in ledger: Ledger) throws -> [Int: HandoffReceived] {
        try ledger.read { view in
            var found: [Int: HandoffReceived] = [:]
            for sequence in try view.sequences(of: .handoffReceived) {
                if case .handoffReceived(let body)? = try view.event(sequence)?.body, body.checkpoint.origin == origin { found[body.package] = body }
            }
            return found
        }
    }

    /// Writes the receipt for `verified` into `directory`: this ledger's cosignature on the
    /// sender's checkpoint, and a newly signed checkpoint of this ledger with an inclusion proof
    /// of the "handoff received" event.
    public func writeReceipt(for verified: VerifiedHandoff, to directory: String, at time: Timestamp = .now()) throws {
        guard let sequence = verified.receivedSequence else { throw RunRefused("the package was checked but not recorded (a dry run), so there is nothing to acknowledge") }
        let key = try ledger.signingKey().key
        let origin = try ledger.origin()
        let checkpoint = try ledger.signCheckpoint(with: key, at: time)
        let proof = try ledger.prove(sequence, against: checkpoint)
        let sender = verified.manifest.checkpoint
        let cosignature = try Cosignature.sign(sender, name: origin, key: key, timestamp: UInt64(max(0, time.seconds)))
        let own = SignedNote.Signature(name: sender.origin, keyID: sender.keyID, bytes: sender.signature)
        let receipt = HandoffReceipt(cosignedCheckpoint: SignedNote(text: sender.body, signatures: [own, cosignature]), event: proof.record, proof: TlogProof(proof))
        try receipt.write(to: directory)
    }
}
