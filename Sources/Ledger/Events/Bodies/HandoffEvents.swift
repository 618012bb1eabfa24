import Basics
import Foundation

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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("origin", origin)
        w.field("root_hash", rootHash)
        w.field("signature", signature)
        w.field("time", time)
        w.field("tree_size", treeSize)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        origin = try r.string("origin")
        rootHash = try r.string("root_hash")
        signature = try r.string("signature")
        time = try r.optionalTimestamp("time")
        treeSize = try r.count("tree_size")
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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("checkpoint", checkpoint)
        w.field("manifest_sha256", manifestSHA256)
        w.field("package", package)
        w.field("previous_tree_size", previousTreeSize)
        w.field("row_count", rowCount)
        w.field("rows_sha256", rowsSHA256)
        w.field("target_team", targetTeam)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            package: try r.int("package", in: HandoffManifest.packagesAllowed), targetTeam: try r.string("target_team"),
            rowCount: try r.count("row_count"), rowsSHA256: try r.string("rows_sha256"),
            manifestSHA256: try r.string("manifest_sha256"), previousTreeSize: try r.count("previous_tree_size"),
            checkpoint: try CheckpointFields(reading: r.object("checkpoint")))
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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("checkpoint", checkpoint)
        w.field("manifest", manifest)
        w.field("manifest_sha256", manifestSHA256)
        w.field("package", package)
        w.field("package_path", packagePath)
        w.field("row_count", rowCount)
        w.field("rows_root", rowsRoot)
        w.field("rows_sha256", rowsSHA256)
        w.field("sender_team", senderTeam)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            senderTeam: try r.string("sender_team"), package: try r.int("package", in: HandoffManifest.packagesAllowed),
            rowCount: try r.count("row_count"), rowsSHA256: try r.string("rows_sha256"), rowsRoot: try r.optionalString("rows_root"),
            manifestSHA256: try r.string("manifest_sha256"), manifest: try r.string("manifest"), packagePath: try r.string("package_path"),
            checkpoint: try CheckpointFields(reading: r.object("checkpoint")))
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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("detail", detail)
        w.field("manifest_sha256", manifestSHA256)
        w.field("package_path", packagePath)
        w.field("reason", reason)
        w.field("sender_key_name", senderKeyName)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            reason: try r.string("reason"), detail: try r.string("detail"), packagePath: try r.string("package_path"),
            manifestSHA256: try r.optionalString("manifest_sha256"), senderKeyName: try r.string("sender_key_name"))
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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("cosignature", cosignature)
        w.field("cosigned_at", cosignedAt)
        w.field("manifest_sha256", manifestSHA256)
        w.field("package", package)
        w.field("recipient_checkpoint", recipientCheckpoint)
        w.field("recipient_seq", recipientSequence)
        w.field("target_team", targetTeam)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            package: try r.int("package", in: HandoffManifest.packagesAllowed), targetTeam: try r.string("target_team"),
            manifestSHA256: try r.string("manifest_sha256"),
            recipientSequence: try r.count("recipient_seq"), recipientCheckpoint: try CheckpointFields(reading: r.object("recipient_checkpoint")),
            cosignedAt: try r.timestamp("cosigned_at"), cosignature: try r.string("cosignature"))
    }
}
