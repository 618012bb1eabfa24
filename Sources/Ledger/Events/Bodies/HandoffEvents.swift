import Basics
import Foundation
import LogEngine

/// A signed checkpoint as a handoff event keeps it: every field of the note, so the note
/// itself can be rebuilt byte for byte and checked again.
public struct CheckpointFields: Hashable, Sendable {
    /// The log's name, `handover/<team ID>/<ledger ID>`.
    public var origin: String
    public var treeSize: Int
    /// The root hash, base64 as in the note.
    public var rootHash: String
    /// The note's time line: only in checkpoints signed before version 0.5.0.
    public var time: Timestamp?
    /// The signature line's base64 (key ID and Ed25519 signature), as in the note.
    public var signature: String

    public init(origin: String, treeSize: Int, rootHash: String, time: Timestamp? = nil, signature: String) {
        self.origin = origin
        self.treeSize = treeSize
        self.rootHash = rootHash
        self.time = time
        self.signature = signature
    }

    /// The fields of `checkpoint`.
    public init(_ checkpoint: Checkpoint) {
        origin = checkpoint.origin
        treeSize = Int(checkpoint.treeSize)
        rootHash = Data(checkpoint.rootHash).base64EncodedString()
        time = checkpoint.time
        signature = Data(checkpoint.keyID + checkpoint.signature).base64EncodedString()
    }

    /// The checkpoint note these fields make.
    public func checkpoint() throws -> Checkpoint {
        let timeLine = time.map { "time \($0.rfc3339)\n" } ?? ""
        return try Checkpoint(parsing: "\(origin)\n\(treeSize)\n\(rootHash)\n\(timeLine)\n\u{2014} \(origin) \(signature)\n")
    }
}

/// Body of "handoff issued" (team A): a signed handoff package was written for the target
/// team; the manifest's digest ties the package to this event.
public struct HandoffIssued: Hashable, Sendable {
    /// The package's number for this target, from 1.
    public var package: Int
    public var targetTeam: String
    public var rowCount: Int
    /// SHA-256 of `rows.csv`, hex.
    public var rowsSHA256: String
    /// SHA-256 of `manifest.txt`, hex.
    public var manifestSHA256: String
    /// The tree size of the previous package's checkpoint (0 for the first): the package lists
    /// the generated events after it, up to its own checkpoint.
    public var previousTreeSize: Int
    /// The checkpoint of this ledger the manifest holds.
    public var checkpoint: CheckpointFields

    public init(
        package: Int, targetTeam: String, rowCount: Int, rowsSHA256: String, manifestSHA256: String, previousTreeSize: Int,
        checkpoint: CheckpointFields
    ) {
        self.package = package
        self.targetTeam = targetTeam
        self.rowCount = rowCount
        self.rowsSHA256 = rowsSHA256
        self.manifestSHA256 = manifestSHA256
        self.previousTreeSize = previousTreeSize
        self.checkpoint = checkpoint
    }
}

/// Body of "handoff received" (team B): a handoff package passed every check against the
/// pinned sender key before any call to Apple.
public struct HandoffReceived: Hashable, Sendable {
    public var senderTeam: String
    public var package: Int
    public var rowCount: Int
    public var rowsSHA256: String
    /// The rows' Merkle root the manifest signs (v2), hex; nil for a v1 package.
    public var rowsRoot: String?
    public var manifestSHA256: String
    /// The manifest itself, the signed note exactly as received (at most 64 KiB): evidence
    /// anyone can check again with the sender's verifier key.
    public var manifest: String
    /// Where the package was read from, as given.
    public var packagePath: String
    /// The sender's checkpoint the manifest holds, verified with the pinned key.
    public var checkpoint: CheckpointFields

    public init(
        senderTeam: String, package: Int, rowCount: Int, rowsSHA256: String, rowsRoot: String? = nil, manifestSHA256: String, manifest: String,
        packagePath: String, checkpoint: CheckpointFields
    ) {
        self.senderTeam = senderTeam
        self.package = package
        self.rowCount = rowCount
        self.rowsSHA256 = rowsSHA256
        self.rowsRoot = rowsRoot
        self.manifestSHA256 = manifestSHA256
        self.manifest = manifest
        self.packagePath = packagePath
        self.checkpoint = checkpoint
    }
}

/// Body of "handoff refused" (team B): a handoff package failed a check; nothing was sent to Apple.
public struct HandoffRefused: Hashable, Sendable {
    /// The check that failed (`rows-digest`, `wrong-target`, ...; docs/migrating.md, "Both halves").
    public var reason: String
    /// What was found, in words; text from the package is kept as read.
    public var detail: String
    public var packagePath: String
    /// SHA-256 of the manifest file as read, hex, when there was one.
    public var manifestSHA256: String?
    /// The pinned sender key's name (the sender ledger's origin).
    public var senderKeyName: String

    public init(reason: String, detail: String, packagePath: String, manifestSHA256: String?, senderKeyName: String) {
        self.reason = reason
        self.detail = detail
        self.packagePath = packagePath
        self.manifestSHA256 = manifestSHA256
        self.senderKeyName = senderKeyName
    }
}

/// Body of "handoff acknowledged" (team A): the recipient's receipt for a package checked out:
/// its cosignature on this ledger's checkpoint, and its own checkpoint covering its
/// "handoff received" event.
public struct HandoffAcknowledged: Hashable, Sendable {
    public var package: Int
    public var targetTeam: String
    public var manifestSHA256: String
    /// The recipient's "handoff received" event in its own ledger.
    public var recipientSequence: Int
    /// The recipient's checkpoint covering that event.
    public var recipientCheckpoint: CheckpointFields
    /// When the recipient cosigned (the cosignature's timestamp).
    public var cosignedAt: Timestamp
    /// The cosignature line's base64 (key ID, timestamp, signature), as in the receipt.
    public var cosignature: String

    public init(
        package: Int, targetTeam: String, manifestSHA256: String, recipientSequence: Int, recipientCheckpoint: CheckpointFields,
        cosignedAt: Timestamp, cosignature: String
    ) {
        self.package = package
        self.targetTeam = targetTeam
        self.manifestSHA256 = manifestSHA256
        self.recipientSequence = recipientSequence
        self.recipientCheckpoint = recipientCheckpoint
        self.cosignedAt = cosignedAt
        self.cosignature = cosignature
    }
}

extension CheckpointFields: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            origin: try c.field("origin", v?.origin), treeSize: try c.count("tree_size", v?.treeSize),
            rootHash: try c.field("root_hash", v?.rootHash),
            time: try c.optional("time", v?.time), signature: try c.field("signature", v?.signature))
    }
}

extension HandoffIssued: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            package: try c.field("package", v?.package, in: HandoffManifest.packagesAllowed), targetTeam: try c.field("target_team", v?.targetTeam),
            rowCount: try c.count("row_count", v?.rowCount), rowsSHA256: try c.field("rows_sha256", v?.rowsSHA256),
            manifestSHA256: try c.field("manifest_sha256", v?.manifestSHA256),
            previousTreeSize: try c.count("previous_tree_size", v?.previousTreeSize),
            checkpoint: try c.field("checkpoint", v?.checkpoint))
    }
}

extension HandoffReceived: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            senderTeam: try c.field("sender_team", v?.senderTeam), package: try c.field("package", v?.package, in: HandoffManifest.packagesAllowed),
            rowCount: try c.count("row_count", v?.rowCount), rowsSHA256: try c.field("rows_sha256", v?.rowsSHA256),
            rowsRoot: try c.optional("rows_root", v?.rowsRoot), manifestSHA256: try c.field("manifest_sha256", v?.manifestSHA256),
            manifest: try c.field("manifest", v?.manifest), packagePath: try c.field("package_path", v?.packagePath),
            checkpoint: try c.field("checkpoint", v?.checkpoint))
    }
}

extension HandoffRefused: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            reason: try c.field("reason", v?.reason), detail: try c.field("detail", v?.detail),
            packagePath: try c.field("package_path", v?.packagePath),
            manifestSHA256: try c.optional("manifest_sha256", v?.manifestSHA256), senderKeyName: try c.field("sender_key_name", v?.senderKeyName))
    }
}

extension HandoffAcknowledged: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            package: try c.field("package", v?.package, in: HandoffManifest.packagesAllowed), targetTeam: try c.field("target_team", v?.targetTeam),
            manifestSHA256: try c.field("manifest_sha256", v?.manifestSHA256), recipientSequence: try c.count("recipient_seq", v?.recipientSequence),
            recipientCheckpoint: try c.field("recipient_checkpoint", v?.recipientCheckpoint), cosignedAt: try c.field("cosigned_at", v?.cosignedAt),
            cosignature: try c.field("cosignature", v?.cosignature))
    }
}
