import Basics
import Crypto
import Foundation
import Ledger
import LogEngine

/// A handoff package read and checked on its own, against the pinned sender key alone: what
/// team B's exchange checks before looking at its ledger, and what an auditor reconciling with
/// packages in place of team A's ledger relies on.
public struct ReadPackage: Sendable {
    public var package: HandoffPackage
    public var manifest: HandoffManifest
    /// SHA-256 of `manifest.txt`, hex.
    public var manifestSHA256: String
    /// `manifest.txt` as read.
    public var manifestText: String
    /// `rows.csv`, checked; read again chunk by chunk, each chunk held to the bytes checked.
    public var rows: PackageRows
    /// `consistency.txt`'s proof from the previous package's size to this one's.
    public var consistencyProof: [[UInt8]]

    /// What a reconciliation needs of the package, its rows read again.
    public func listing() throws -> PackageListing {
        PackageListing(
            package: manifest.package, manifestSHA256: manifestSHA256, targetTeam: manifest.targetTeam, previousTreeSize: manifest.previousTreeSize,
            checkpoint: manifest.checkpoint, issuedAt: manifest.issuedAt, rows: try rows.all(), consistencyProof: consistencyProof)
    }
}

/// Reads and checks one package: the manifest's form and signature by the pinned key, its
/// checkpoint (of that key's ledger, signed by it), the rows (``PackageRows``) and the
/// consistency file.
public enum HandoffPackageReader {
    /// The package at `path` read as evidence, its listing: a check that fails is a
    /// ``HandoffRefusal`` of subject `evidence`, an integrity failure.
    public static func evidence(at path: String, senderKey: VerifierKey) throws -> PackageListing {
        var digest: String?
        do { return try read(HandoffPackage(path: path), senderKey: senderKey, manifestDigest: &digest).listing() } catch var refusal
            as HandoffRefusal
        {
            refusal.subject = .evidence(path: path)
            throw refusal
        }
    }

    /// The package checked; throws the ``HandoffRefusal`` of the first check that fails. Sets
    /// `manifestDigest` as soon as the manifest is read, for the refusal's record.
    public static func read(_ package: HandoffPackage, senderKey: VerifierKey, manifestDigest: inout String?) throws -> ReadPackage {
        func refuse(_ reason: HandoffRefusal.Reason, _ detail: String) -> HandoffRefusal { HandoffRefusal(reason, detail) }
        func malformed(_ error: Error) -> HandoffRefusal { refuse(.malformed, ErrorText.describing(error)) }

        let manifestBytes: [UInt8]
        do { manifestBytes = try package.read(HandoffPackage.manifestFile) } catch { throw malformed(error) }
        let manifestSHA256 = Hex.encode(SHA256.hash(data: manifestBytes))
        manifestDigest = manifestSHA256
        let note: SignedNote
        do { note = try SignedNote(parsing: manifestBytes) } catch { throw malformed(error) }
        switch note.verify(name: senderKey.name, publicKey: senderKey.publicKey) {
        case .verified: break
        case .notSignedByKey:
            let signers = note.signatures.map { "\(InertText.forScreen($0.name)) (key ID \(Hex.encode($0.keyID)))" }.joined(separator: ", ")
            throw refuse(.notSignedByPinnedKey, "the manifest is signed by \(signers), not by the pinned sender key \(senderKey.line)")
        case .invalid:
            throw refuse(
                .manifestSignature, "the manifest's signature by the pinned sender key does not verify: the manifest was changed after it was signed")
        }
        // Its digest names the package in both ledgers: a line added on the way would change it.
        guard note.signatures.count == 1 else {
            throw refuse(
                .malformed, "the manifest carries \(note.signatures.count) signature lines; a handoff manifest has exactly one, the sender's")
        }
        let manifest: HandoffManifest
        do { manifest = try HandoffManifest(text: note.text) } catch { throw malformed(error) }
        let checkpoint = manifest.checkpoint
        guard checkpoint.origin.utf8.elementsEqual(senderKey.name.utf8) else {
            throw refuse(
                .checkpointFromAnotherLedger,
                "the manifest's checkpoint is of \(InertText.forScreen(checkpoint.origin)), the pinned sender key is \(senderKey.name)'s")
        }
        guard checkpoint.origin.utf8.starts(with: "handover/\(manifest.senderTeam)/".utf8) else {
            throw refuse(
                .checkpointFromAnotherLedger,
                "the manifest names sender team \(InertText.forScreen(manifest.senderTeam)), its checkpoint is of \(checkpoint.origin)")
        }
        guard checkpoint.isSigned(by: senderKey.publicKey) else {
            throw refuse(.checkpointSignature, "the checkpoint in the manifest does not verify with the pinned sender key \(senderKey.line)")
        }
        let rows = try PackageRows.check(package, against: manifest)
        let submission: CheckpointSubmission
        do {
            let bytes = try package.read(HandoffPackage.consistencyFile)
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw LedgerError(.malformedRecord, "\(HandoffPackage.consistencyFile) is not UTF-8 text")
            }
            submission = try CheckpointSubmission(parsing: text)
        } catch { throw malformed(error) }
        guard submission.checkpointText.utf8.elementsEqual(checkpoint.text.utf8) else {
            throw refuse(.malformed, "\(HandoffPackage.consistencyFile) holds another checkpoint than the manifest")
        }
        guard submission.oldSize == manifest.previousTreeSize else {
            throw refuse(
                .previousMismatch,
                "\(HandoffPackage.consistencyFile) proves from size \(submission.oldSize), the manifest's previous package ends at \(manifest.previousTreeSize)"
            )
        }
        return ReadPackage(
            package: package, manifest: manifest, manifestSHA256: manifestSHA256, manifestText: note.serialized, rows: rows,
            consistencyProof: submission.proof)
    }
}
