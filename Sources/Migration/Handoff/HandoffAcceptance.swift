import Basics
import Crypto
import Foundation
import Ledger
import LogEngine

/// A handoff package that passed every check against the pinned sender key.
public struct VerifiedHandoff: Sendable {
    public var package: HandoffPackage
    public var manifest: HandoffManifest
    /// SHA-256 of `manifest.txt`, hex.
    public var manifestSHA256: String
    /// `manifest.txt` as read (canonical UTF-8: it parsed as a signed note).
    public var manifestText: String
    /// `rows.csv`, checked; read again chunk by chunk, each chunk held to the bytes checked.
    public var rows: PackageRows
    /// This package's "handoff received" event, once recorded (or found recorded before).
    public var receivedSequence: UInt64?
    /// When it was first recorded as received: the time the receipt's cosignature states.
    public var receivedAt: Timestamp?
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
    /// The pinned sender verifier key: its name is the sender ledger's origin.
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
        try await accept(record: record) { _ in }
    }

    /// ``accept(record:)``, with `beforeRecording` called once the package passed its checks and
    /// before anything is recorded.
    private func accept(record: Bool, beforeRecording: (VerifiedHandoff) throws -> Void) async throws -> VerifiedHandoff {
        var manifestSHA256: String?
        do {
            var verified = try check(manifestDigest: &manifestSHA256)
            guard record else { return verified }
            try beforeRecording(verified)
            let manifest = verified.manifest
            let received = HandoffReceived(
                senderTeam: manifest.senderTeam, package: manifest.package, rowCount: manifest.rowCount, rowsSHA256: manifest.rowsSHA256,
                rowsRoot: manifest.rowsRoot, manifestSHA256: verified.manifestSHA256, manifest: verified.manifestText, packagePath: package.path,
                checkpoint: CheckpointFields(manifest.checkpoint))
            // One event per sender and package number, whichever process appends first: a
            // different manifest under a number already taken is the sender's equivocation.
            let outcome = try await ledger.append(
                EventDraft(.handoffReceived(received), idempotencyKey: "handoff-received:\(senderKey.name):\(manifest.package)"))
            switch outcome {
            case .recorded(let sequence, let recordedAt):
                verified.receivedSequence = sequence
                verified.receivedAt = recordedAt
            case .duplicate(let sequence):
                // Recorded before, by this run's predecessor or a process racing it: the same manifest, or equivocation.
                let recorded = try ledger.read { try $0.event(sequence) }
                guard let recorded, case .handoffReceived(let first) = recorded.body else {
                    throw LedgerError(
                        .malformedRecord,
                        "event \(sequence) holds the idempotency key of package \(manifest.package) but is not a \"handoff received\"")
                }
                guard first.manifestSHA256.utf8.elementsEqual(verified.manifestSHA256.utf8) else {
                    throw HandoffRefusal(
                        .conflictingPackage,
                        "package \(manifest.package) from \(senderKey.name) was received before with manifest \(first.manifestSHA256); this one's is \(verified.manifestSHA256)"
                    )
                }
                verified.receivedSequence = sequence
                verified.receivedAt = recorded.recordedAt
                verified.wasReceivedBefore = true
            }
            return verified
        } catch var refusal as HandoffRefusal {
            if record {
                _ = try await ledger.append(
                    EventDraft(
                        .handoffRefused(
                            HandoffRefused(
                                reason: refusal.reason.rawValue, detail: refusal.detail, packagePath: package.path, manifestSHA256: manifestSHA256,
                                senderKeyName: senderKey.name))))
                refusal.isRecorded = true
            }
            throw refusal
        }
    }

    /// `handoff receive`: ``accept(record:)``, then the package's rows taken into the log
    /// (``HandoffRows``), each chunk once however often the package is received. Returns the
    /// verified package and what was recorded of its rows.
    ///
    /// The receive holds its run lock (``RunLock/receiveName(manifestSHA256:)``) from before
    /// "handoff received" is recorded until the last row is, so `status` tells a receive still
    /// running from one stopped part way.
    public func receive() async throws -> (verified: VerifiedHandoff, rows: HandoffRows.Recorded) {
        var lock: RunLock?
        defer { lock?.release() }
        let verified = try await accept(record: true) { [ledger] verified in
            lock = try RunLock(
                RunLock.receiveName(manifestSHA256: verified.manifestSHA256), in: ledger.directory,
                holder: RunLock.Holder(host: ledger.actor.host, attempting: verified.manifest.rowCount))
        }
        let rows = try await HandoffRows(verified, origin: senderKey.name).record(in: ledger)
        return (verified, rows)
    }

    /// Every check, in order; the first that fails is the refusal: the package on its own
    /// (``HandoffPackageReader``), then against this ledger (its team, its app, the packages
    /// received before from the same sender).
    private func check(manifestDigest: inout String?) throws -> VerifiedHandoff {
        let read = try HandoffPackageReader.read(package, senderKey: senderKey, manifestDigest: &manifestDigest)
        let manifest = read.manifest
        let identity = try ledger.identity()
        guard manifest.targetTeam.utf8.elementsEqual(identity.teamID.utf8) else {
            throw HandoffRefusal(
                .wrongTarget, "the package is for team \(InertText.forScreen(manifest.targetTeam)), this ledger is team \(identity.teamID)'s")
        }
        guard manifest.clientIDs.contains(where: { client in identity.clientIDs.contains { $0.utf8.elementsEqual(client.utf8) } }) else {
            throw HandoffRefusal(
                .wrongClient,
                "the package is for client \(manifest.clientIDs.map(InertText.forScreen).joined(separator: ", ")), this ledger is for \(identity.clientIDs.joined(separator: ", "))"
            )
        }
        try checkSequence(manifest, manifestSHA256: read.manifestSHA256, proof: read.consistencyProof) { HandoffRefusal($0, $1) }
        return VerifiedHandoff(
            package: package, manifest: manifest, manifestSHA256: read.manifestSHA256, manifestText: read.manifestText, rows: read.rows)
    }

    /// This package against the ones received before from the same sender: a new number, the
    /// next one, naming the previous manifest, and a log that only grew since its checkpoint.
    private func checkSequence(
        _ manifest: HandoffManifest, manifestSHA256: String, proof: [[UInt8]],
        _ refuse: (HandoffRefusal.Reason, String) -> HandoffRefusal
    ) throws {
        let received = try HandoffAcceptance.received(from: senderKey.name, in: ledger)
        if let same = received[manifest.package] {
            guard same.manifestSHA256.utf8.elementsEqual(manifestSHA256.utf8) else {
                throw refuse(
                    .conflictingPackage,
                    "package \(manifest.package) from \(senderKey.name) was received before with manifest \(same.manifestSHA256); this one's is \(manifestSHA256)"
                )
            }
            return
        }
        guard manifest.package > 1 else {
            guard manifest.previousTreeSize == 0 else {
                throw refuse(.previousMismatch, "package 1 says a previous package ended at \(manifest.previousTreeSize) events")
            }
            return
        }
        guard let previous = received[manifest.package - 1] else {
            throw refuse(.outOfOrder, "package \(manifest.package - 1) from \(senderKey.name) has not been received; exchange it first")
        }
        guard manifest.previousManifestSHA256.map({ $0.utf8.elementsEqual(previous.manifestSHA256.utf8) }) == true,
            UInt64(previous.checkpoint.treeSize) == manifest.previousTreeSize
        else {
            throw refuse(
                .previousMismatch,
                "the manifest follows package \(manifest.package - 1) with manifest \(manifest.previousManifestSHA256 ?? "-") at \(manifest.previousTreeSize) events; "
                    + "the one received has manifest \(previous.manifestSHA256) at \(previous.checkpoint.treeSize) events")
        }
        let old: Checkpoint
        do { old = try previous.checkpoint.checkpoint() } catch { throw refuse(.malformed, ErrorText.describing(error)) }
        guard
            MerkleProof.verifyConsistency(
                oldSize: old.treeSize, oldRoot: old.rootHash, newSize: manifest.checkpoint.treeSize,
                newRoot: manifest.checkpoint.rootHash, proof: proof)
        else {
            throw refuse(
                .logRewritten,
                "the consistency proof from package \(manifest.package - 1)'s checkpoint (\(old.treeSize) events) to this one's "
                    + "(\(manifest.checkpoint.treeSize)) does not verify: the sender's log was rewritten between the two packages")
        }
    }

    /// The packages recorded as received from the sender ledger `origin`, by number.
    static func received(from origin: String, in ledger: Ledger) throws -> [Int: HandoffReceived] {
        var found: [Int: HandoffReceived] = [:]
        for (_, body) in try ledger.read({ try $0.handoffsReceived() }) where body.checkpoint.origin.utf8.elementsEqual(origin.utf8) {
            found[body.package] = body
        }
        return found
    }

    /// Writes the receipt for `verified` into `directory`: this ledger's cosignature on the
    /// sender's checkpoint, timed when the package was first received (so a receipt written
    /// again says the same), and a newly signed checkpoint of this ledger with an inclusion proof
    /// of the "handoff received" event.
    public func writeReceipt(for verified: VerifiedHandoff, to directory: String) throws {
        guard let sequence = verified.receivedSequence, let receivedAt = verified.receivedAt else {
            throw RunRefused("the package was checked but not recorded (a dry run), so there is nothing to acknowledge")
        }
        let key = try ledger.signingKey().key
        let origin = try ledger.origin()
        let checkpoint = try ledger.signCheckpoint(with: key)
        let proof = try ledger.prove(sequence, against: checkpoint)
        let sender = verified.manifest.checkpoint
        let cosignature = try Cosignature.sign(sender, name: origin, key: key, timestamp: UInt64(max(0, receivedAt.seconds)))
        let own = SignedNote.Signature(name: sender.origin, keyID: sender.keyID, bytes: sender.signature)
        let receipt = HandoffReceipt(
            cosignedCheckpoint: SignedNote(text: sender.body, signatures: [own, cosignature]), event: proof.record, proof: TlogProof(proof))
        try receipt.write(to: directory)
    }
}
