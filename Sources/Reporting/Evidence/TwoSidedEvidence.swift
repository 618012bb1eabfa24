import Basics
import Crypto
import Foundation
import Ledger
import LogEngine
import Projections

/// One person's evidence from both teams' ledgers (schemas/evidence-bundle.md, "Both halves"):
/// a bundle of each ledger's events about the person, joined by the `transfer_sub`, with the
/// handoff events of the packages that listed them, each package's signed manifest and the
/// recipient's cosignature that tie the two halves. Reads both ledgers only.
public enum TwoSidedEvidence {
    /// The top manifest's format marker.
    public static let format = "handover-evidence-two-sided/2"
    /// The marker of two-sided bundles written before `sender-consistency.txt`: still checked, without that link.
    public static let formatWithoutLink = "handover-evidence-two-sided/1"
    /// In `handoff/N/`: the consistency proof from the package's checkpoint to `sender/checkpoint`.
    static let consistencyFile = "sender-consistency.txt"

    /// What a written two-sided bundle holds.
    public struct Summary: Sendable {
        public var transferSub: String
        public var sender: EvidenceBundle.Summary
        public var recipient: EvidenceBundle.Summary
        /// The packages that listed the person, and whether the sender recorded the receipt of each.
        public var packages: [(number: Int, acknowledged: Bool)]
    }

    /// One side: its ledger and projections.
    public struct Side {
        public let ledger: Ledger
        public let projection: UserProjection
        public init(ledger: Ledger, projection: UserProjection) {
            self.ledger = ledger
            self.projection = projection
        }
    }

    /// A package that listed the person, with the events on both sides that concern it.
    private struct Package {
        var issued: HandoffIssued
        var issuedSequence: UInt64
        var received: (body: HandoffReceived, sequence: UInt64)?
        var acknowledged: (body: HandoffAcknowledged, sequence: UInt64)?
    }

    /// Writes the bundle of the person `subject` names (in either ledger) to the new directory `target`.
    public static func write(subject: String, recipient: Side, sender: Side, reveal: Bool, to target: String) throws -> Summary {
        let team = try recipient.ledger.identity().teamID
        // The person on either side, joined by the transfer_sub.
        let foundB = try recipient.projection.read(recipient.ledger) { snapshot, _ in try snapshot.user(matching: subject) }
        let foundA = try sender.projection.read(sender.ledger) { snapshot, _ in try snapshot.user(matching: subject) }
        guard let transferSub = foundB?.transferSub ?? foundA?.transferSub else {
            throw EvidenceBundle.Refusal(kind: .noUser, description: "no user with identifier \"\(subject)\" and a transfer_sub in either ledger")
        }
        let id = Identifier(.transferSub, transferSub)
        let senderEvents = try contents(of: id, on: sender).events
        let generated = senderEvents.first { $0.type == .transferIDGenerated && $0.identifiers.transferSub == transferSub }?.sequence

        // The packages whose events hold the generation, and their events on both sides.
        let (issued, acknowledged) = try sender.ledger.read { (try $0.handoffsIssued(), try $0.handoffsAcknowledged()) }
        let received = try recipient.ledger.read { try $0.handoffsReceived() }
        let packages: [Package] = issued.compactMap { sequence, body in
            guard let generated, body.targetTeam.utf8.elementsEqual(team.utf8),
                generated > UInt64(body.previousTreeSize), generated <= UInt64(body.checkpoint.treeSize)
            else { return nil }
            let digest = body.manifestSHA256.utf8
            return Package(
                issued: body, issuedSequence: sequence,
                received: received.first { $0.body.manifestSHA256.utf8.elementsEqual(digest) }.map { ($0.body, $0.sequence) },
                acknowledged: acknowledged.first { $0.body.manifestSHA256.utf8.elementsEqual(digest) }.map { ($0.body, $0.sequence) })
        }
        var recipientContents = try contents(of: id, on: recipient)
        let senderAll = try events(
            senderEvents.map(\.sequence) + packages.flatMap { [$0.issuedSequence] + ($0.acknowledged.map { [$0.sequence] } ?? []) }, in: sender.ledger
        )
        recipientContents.events = try events(
            recipientContents.events.map(\.sequence) + packages.compactMap { $0.received?.sequence }, in: recipient.ledger)

        return try EvidenceBundle.writing(to: target) { partial in
            let a = try EvidenceBundle.writeContents(
                subject: transferSub, .init(events: senderAll), ledger: sender.ledger, checkpoint: nil, reveal: reveal, into: partial + "/sender")
            let b = try EvidenceBundle.writeContents(
                subject: transferSub, recipientContents, ledger: recipient.ledger, checkpoint: nil, reveal: reveal, into: partial + "/recipient")
            var listed: [JSONValue] = []
            for package in packages {
                guard let received = package.received else { continue }
                let dir = "\(partial)/handoff/\(package.issued.package)"
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
                try EvidenceBundle.write(Array(received.body.manifest.utf8), to: dir + "/manifest.txt")
                // Team A's log at the bundle's checkpoint extends the log the package was signed from.
                let packageSize = UInt64(package.issued.checkpoint.treeSize)
                let link = try sender.ledger.read { try $0.consistencyProof(from: packageSize, to: a.checkpoint.treeSize) }
                try EvidenceBundle.write(
                    Array(link.map { Data($0).base64EncodedString() + "\n" }.joined().utf8), to: dir + "/" + consistencyFile)
                if let acknowledged = package.acknowledged {
                    try EvidenceBundle.write(
                        Array(try cosigned(package.issued.checkpoint, acknowledged.body).utf8),
                        to: dir + "/cosigned-checkpoint.txt")
                }
                listed.append(
                    .object([
                        "package": .int(Int64(package.issued.package)), "manifest_sha256": .string(package.issued.manifestSHA256),
                        "acknowledged": .bool(package.acknowledged != nil),
                    ]))
            }
            let manifest = JSONValue.object([
                "format": .string(format), "subject": .string(subject), "transfer_sub": .string(transferSub), "packages": .array(listed),
            ])
            try EvidenceBundle.write(manifest.canonicalBytes + [0x0A], to: partial + "/manifest.json")
            try EvidenceBundle.write(Array(EvidenceGuide.text.utf8), to: partial + "/VERIFY.md")
            return Summary(
                transferSub: transferSub, sender: a, recipient: b,
                packages: packages.filter { $0.received != nil }.map { ($0.issued.package, $0.acknowledged != nil) })
        }
    }

    /// What one side's bundle holds of the person (nothing when that ledger does not know the
    /// `transfer_sub`).
    private static func contents(of id: Identifier, on side: Side) throws -> EvidenceBundle.Contents {
        try side.projection.read(side.ledger) { snapshot, view in
            guard let user = try snapshot.user(with: id) else { return .init(events: []) }
            return try .init(of: user, snapshot: snapshot, view: view)
        }
    }

    /// The events `sequences` name, once each, in order, as logged.
    private static func events(_ sequences: [UInt64], in ledger: Ledger) throws -> [RecordedEvent] {
        try ledger.read { view in try Set(sequences).sorted().compactMap { try view.eventAsLogged($0) } }
    }

    /// Package checkpoint `fields` as the receipt had it: the checkpoint's own line, then the
    /// recipient's cosignature line the acknowledgement recorded.
    private static func cosigned(_ fields: CheckpointFields, _ acknowledged: HandoffAcknowledged) throws -> String {
        let checkpoint = try fields.checkpoint()
        guard let blob = Data(base64Encoded: acknowledged.cosignature), blob.count > 4 else {
            throw LedgerError(.malformedRecord, "the recorded cosignature of package \(acknowledged.package) is not base64")
        }
        let own = SignedNote.Signature(name: checkpoint.origin, keyID: checkpoint.keyID, bytes: checkpoint.signature)
        let theirs = SignedNote.Signature(
            name: acknowledged.recipientCheckpoint.origin, keyID: Array(blob.prefix(4)), bytes: Array(blob.dropFirst(4)))
        return SignedNote(text: checkpoint.body, signatures: [own, theirs]).serialized
    }
}
