import Basics
import Crypto
import Foundation
import Ledger
import LogEngine

/// Team A's side of a signed handoff: writes the next package for a target team (every
/// "transfer ID generated" event for it since the previous package's checkpoint), signed with
/// the ledger's checkpoint key, and records "handoff issued".
public struct HandoffIssuer: Sendable {
    public let ledger: Ledger

    public init(ledger: Ledger) { self.ledger = ledger }

    /// The packages issued for `target` so far, in order.
    public func issued(for target: String) throws -> [HandoffIssued] {
        try ledger.read { try $0.handoffsIssued() }.map(\.body).filter { $0.targetTeam == target }.sorted { $0.package < $1.package }
    }

    /// Writes package N+1 for `target` into `directory` (made here; it must not exist) and
    /// records it. Returns nil, writing nothing, when no identifier was generated for `target`
    /// since the last package.
    public func issue(target: String, into directory: String, at time: Timestamp = .now()) async throws -> HandoffIssued? {
        let identity = try ledger.identity()
        guard identity.role == .sender else {
            throw HandoffIssueRefused(
                "\(ledger.directory) is team \(identity.teamID)'s recipient ledger; handoff packages are issued from the sender's ledger")
        }
        guard target != identity.teamID else { throw HandoffIssueRefused("the target team \(target) is this ledger's own team") }
        let previous = try issued(for: target).last
        let previousSize = UInt64(previous?.checkpoint.treeSize ?? 0)
        guard !FileManager.default.fileExists(atPath: directory) else {
            throw HandoffIssueRefused("\(directory) already exists; name a new directory for the package")
        }

        let key = try ledger.signingKey().key
        let origin = try ledger.origin()
        let checkpoint = try ledger.signCheckpoint(with: key)
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false) } catch {
            throw LedgerError(.file, "cannot make the package directory \(directory)", underlying: error)
        }
        var finished = false
        // A package not wholly written and recorded is not left behind to be sent.
        defer { if !finished { try? FileManager.default.removeItem(atPath: directory) } }

        let package = HandoffPackage(path: directory)
        let rows = try writeRows(target: target, after: previousSize, through: checkpoint.treeSize, to: package.file(HandoffPackage.rowsFile))
        guard rows.count > 0 else { return nil }
        let proof = previousSize == 0 ? [] : try ledger.read { try $0.consistencyProof(from: previousSize, to: checkpoint.treeSize) }
        let manifest = HandoffManifest(
            package: (previous?.package ?? 0) + 1, senderTeam: identity.teamID, clientIDs: identity.clientIDs, targetTeam: target,
            rowCount: rows.count, rowsSHA256: rows.sha256, rowsRoot: rows.root, previousTreeSize: previousSize,
            previousManifestSHA256: previous?.manifestSHA256,
            issuedAt: time, checkpoint: checkpoint)
        let manifestBytes = Array(try SignedNote.signing(manifest.text, name: origin, key: key).serialized.utf8)
        try AtomicFile.write(manifestBytes, to: package.file(HandoffPackage.manifestFile), mode: 0o600)
        let submission = CheckpointSubmission(oldSize: previousSize, proof: proof, checkpointText: checkpoint.text)
        try AtomicFile.write(Array(submission.text.utf8), to: package.file(HandoffPackage.consistencyFile), mode: 0o600)

        let issued = HandoffIssued(
            package: manifest.package, targetTeam: target, rowCount: rows.count, rowsSHA256: rows.sha256,
            manifestSHA256: Hex.encode(SHA256.hash(data: manifestBytes)), previousTreeSize: Int(previousSize),
            checkpoint: CheckpointFields(checkpoint))
        let outcome = try await ledger.append(EventDraft(.handoffIssued(issued), idempotencyKey: "handoff-issued:\(target):\(manifest.package)"))
        guard outcome.isRecorded else {
            throw HandoffIssueRefused(
                "package \(manifest.package) for \(target) was issued meanwhile by another process (event \(outcome.sequence)); nothing was written")
        }
        finished = true
        return issued
    }

    /// Streams the rows of the generated events for `target` in (`after`, `through`] into
    /// `path`, each with a salt of its own (v2); returns how many, the file's SHA-256 and the
    /// rows' Merkle root.
    private func writeRows(target: String, after: UInt64, through: UInt64, to path: String) throws -> (count: Int, sha256: String, root: String) {
        let form = HandoffRowsForm.v2
        let writer = try AtomicFile.Writer(replacing: path, mode: 0o600)
        var hasher = SHA256()
        var tree = MerkleFrontier()
        var buffer: [UInt8] = form.header
        var line: [UInt8] = []
        func flush() throws {
            hasher.update(data: buffer)
            try writer.write(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
        if through > after {
            try ledger.read { view in
                try view.forEachSequence(ofAny: [.transferIDGenerated], from: after + 1, through: through) { sequence in
                    guard let event = try view.event(sequence), case .transferIDGenerated(let body) = event.body, body.targetTeam == target,
                        let transferSub = event.identifiers.transferSub
                    else { return }
                    let salt = RowTree.newSalt()
                    line.removeAll(keepingCapacity: true)
                    form.appendRow(accountID: event.identifiers.accountID ?? "", transferSub: transferSub, sequence: sequence, salt: salt, to: &line)
                    tree.append(leaf: RowTree.leafHash(kind: .handoffRow, row: line)) { _, _, _ in }
                    buffer.append(contentsOf: line)
                    buffer.append(contentsOf: [0x0D, 0x0A])
                    if buffer.count >= 1 << 20 { try flush() }
                }
            }
        }
        try flush()
        try writer.commit()
        return (Int(tree.size), Hex.encode(hasher.finalize()), Hex.encode(tree.root))
    }
}
