import Basics
import Foundation
import LogEngine

extension Ledger {
    /// The name of this log in its checkpoints: `handover/<team ID>/<ledger ID>`.
    public func origin() throws -> String { Ledger.origin(of: try identity()) }

    static func origin(of created: LedgerCreated) -> String { "handover/\(created.teamID)/\(created.ledgerID)" }

    /// This ledger's verifier key (the line and the raw Ed25519 key), read from
    /// `checkpoint.pub`, never from the private key.
    public func verifierKey() throws -> (line: String, publicKey: [UInt8]) {
        guard let (name, key) = try VerifierKeyFile.read(in: directory) else {
            if FileManager.default.fileExists(atPath: CheckpointKey.path(in: directory)) {
                throw LedgerError.needsUpgrade(directory, "it has no verifier key file \(VerifierKeyFile.fileName) yet")
            }
            throw LedgerError(
                .noCheckpointKey,
                "\(directory) has no checkpoint key yet: `\(ShellWord.handover("checkpoint", ledger: directory))` makes one (its verifier key goes to \(VerifierKeyFile.path(in: directory)))"
            )
        }
        let origin = try origin()
        guard name == origin else {
            throw LedgerError(.malformedRecord, "\(VerifierKeyFile.path(in: directory)) is the verifier key of \(name), but this ledger is \(origin)")
        }
        return (Checkpoint.verifierKey(name: name, publicKey: key), key)
    }

    /// The key that signs this ledger's checkpoints; made, with `checkpoint.pub`, for a ledger
    /// that predates checkpoints (`created`). A copy holding only the verifier key cannot sign.
    public func signingKey() throws -> (key: CheckpointKey, created: Bool) {
        if FileManager.default.fileExists(atPath: CheckpointKey.path(in: directory)) { return (try CheckpointKey.load(from: directory), false) }
        guard try VerifierKeyFile.read(in: directory) == nil else {
            throw LedgerError(
                .readOnly,
                "\(directory) holds the verifier key (\(VerifierKeyFile.fileName)) but not the private key: a copy made without keys cannot sign checkpoints in the team's name"
            )
        }
        let key = try CheckpointKey.create(in: directory)
        try VerifierKeyFile.write(name: try origin(), publicKey: key.publicKey, in: directory)
        return (key, true)
    }

    /// Writes `checkpoint.pub` into `target` (by default the ledger's own directory) from the
    /// private key of the ledger in `directory`, when that ledger has a key and `target` has no
    /// such file (a ledger from before it existed, or a copy of one); returns whether it wrote it.
    static func writeVerifierKeyIfMissing(in directory: String, into target: String? = nil, origin: String) throws -> Bool {
        let target = target ?? directory
        guard FileManager.default.fileExists(atPath: CheckpointKey.path(in: directory)),
            !FileManager.default.fileExists(atPath: VerifierKeyFile.path(in: target))
        else { return false }
        try VerifierKeyFile.write(name: origin, publicKey: try CheckpointKey.load(from: directory).publicKey, in: target)
        return true
    }

    /// Signs a checkpoint of the log as it stands, stores it in the `checkpoints` database
    /// and returns it. Events appended meanwhile belong to the next checkpoint.
    public func signCheckpoint(with key: CheckpointKey) throws -> Checkpoint {
        let origin = try origin()
        let tree = try read { try $0.merkleFrontier() }
        // Signed outside the write transaction; the key is the size signed, so appends in
        // between change nothing stored here.
        let checkpoint = try Checkpoint(origin: origin, treeSize: tree.size, rootHash: tree.root, key: key)
        _ = try environment.write { txn in
            try txn.put(schema.checkpoints, key: BigEndian.bytes(tree.size), value: Array(checkpoint.text.utf8))
        }
        return checkpoint
    }

    /// The stored checkpoint with the largest tree size, if any was signed.
    public func latestCheckpoint() throws -> Checkpoint? {
        let text: String? = try read { view in
            try view.transaction.withCursor(schema.checkpoints) { cursor in
                try cursor.last().map { String(decoding: $0.1, as: UTF8.self) }
            }
        }
        return try text.map { try Checkpoint(parsing: $0) }
    }

    /// An inclusion proof of event `sequence` in the tree `checkpoint` signed. An event this
    /// ledger does not hold is ``LedgerError/Code/notInLedger``; one it holds that the checkpoint
    /// does not cover, ``LedgerError/Code/invalidEvent``.
    public func prove(_ sequence: UInt64, against checkpoint: Checkpoint) throws -> InclusionProof {
        try read { view in
            let head = try view.head().sequence
            guard sequence >= 1, sequence <= head else {
                throw LedgerError(.notInLedger, "there is no event \(sequence) in this ledger: it holds events 1 to \(head)")
            }
            guard sequence <= checkpoint.treeSize else {
                throw LedgerError(
                    .invalidEvent,
                    "event \(sequence) is not covered by the checkpoint of \(counted(checkpoint.treeSize, "event")); sign a newer one with `handover checkpoint`"
                )
            }
            guard let raw = try view.record(sequence) else {
                throw LedgerError(.malformedRecord, "event \(sequence) is missing from the log, which holds events 1 to \(head)")
            }
            return InclusionProof(
                sequence: sequence,
                record: Array(try LogView.eventJSON(ofStoredRecord: raw, sequence: sequence)),
                path: try view.inclusionPath(leaf: sequence - 1, treeSize: checkpoint.treeSize),
                checkpoint: checkpoint)
        }
    }

    /// Checks an earlier checkpoint against the log today: its signature by `publicKey`, the
    /// whole log (`verify`, which rebuilds the tree from the records), the tree head over the
    /// checkpoint's events, and a consistency proof from it to today's tree.
    public func audit(_ checkpoint: Checkpoint, publicKey: [UInt8]) throws -> CheckpointAudit {
        var audit = CheckpointAudit(checkpoint: checkpoint)
        let origin = try origin()
        guard checkpoint.origin == origin else {
            return audit.failing("the checkpoint is for \(checkpoint.origin), this ledger is \(origin)")
        }
        guard checkpoint.treeSize > 0 else { return audit.failing("the checkpoint covers no events: it proves nothing about this log") }
        guard checkpoint.isSigned(by: publicKey) else {
            return audit.failing("the signature does not verify with the public key \(Checkpoint.verifierKey(name: origin, publicKey: publicKey))")
        }
        audit.signatureVerified = true
        let report = try verify(rootAt: checkpoint.treeSize)
        guard report.isIntact else {
            return audit.failing("the log fails verification at event \(report.firstBadSequence.map(String.init) ?? "?"): \(report.problem ?? "")")
        }
        guard checkpoint.treeSize <= report.eventCount, let rootThen = report.rootAtRequestedSize else {
            return audit.failing(
                "the checkpoint covers \(counted(checkpoint.treeSize, "event")) but the log holds only \(report.eventCount): events were removed")
        }
        guard rootThen == checkpoint.rootHash else {
            return audit.failing(
                "the first \(checkpoint.treeSize) events hash to \(Hex.encode(rootThen)), the checkpoint says \(Hex.encode(checkpoint.rootHash)): the log was rewritten after it was signed"
            )
        }
        try read { view in
            let tree = try view.merkleFrontier()
            audit.currentSize = tree.size
            audit.currentRoot = tree.root
            audit.consistencyProof = try view.consistencyProof(from: checkpoint.treeSize, to: tree.size)
        }
        guard
            MerkleProof.verifyConsistency(
                oldSize: checkpoint.treeSize, oldRoot: checkpoint.rootHash,
                newSize: audit.currentSize, newRoot: audit.currentRoot, proof: audit.consistencyProof)
        else {
            return audit.failing("the consistency proof from \(checkpoint.treeSize) to \(audit.currentSize) events does not verify")
        }
        return audit
    }
}

/// A ledger's tiles are published from its log and its signed checkpoints.
extension Ledger: CheckpointedLog {}
