import Basics
import Crypto
import Foundation
import Ledger
import LogEngine

/// Checks a two-sided evidence bundle with no ledger present, by the rules of
/// schemas/evidence-bundle.md ("Checking a two-sided bundle"): each side as a bundle, then
/// each package's manifest and cosigned checkpoint against both sides' handoff events.
public enum TwoSidedEvidenceCheck {
    /// What a two-sided bundle that holds proves.
    public struct Result: Sendable {
        public var transferSub: String
        public var sender: EvidenceBundleCheck.Result
        public var recipient: EvidenceBundleCheck.Result
        public var packages: [Int]
    }

    /// Whether `directory` holds a two-sided bundle (its manifest says so).
    public static func isTwoSided(_ directory: String) -> Bool {
        // An absent or unreadable manifest: not this kind of bundle.
        guard let bytes = try? FileBytes.read(directory + "/manifest.json", limit: EvidenceBundleCheck.maximumFileBytes),
            let manifest = try? JSONValue.parseObject(untrusted: bytes)
        else { return false }
        return [TwoSidedEvidence.format, TwoSidedEvidence.formatWithoutLink].contains(manifest["format"]?.stringValue)
    }

    /// Checks the bundle in `directory`; with the keys given, each side's verifier key must be that one.
    public static func run(_ directory: String, senderKey: String? = nil, recipientKey: String? = nil) throws -> Result {
        typealias DoesNotHold = EvidenceBundleCheck.DoesNotHold
        func side(_ name: String, _ key: String?) throws -> EvidenceBundleCheck.Result {
            do { return try EvidenceBundleCheck.run(directory + "/" + name, expectedKey: key) } catch let failure as DoesNotHold {
                throw DoesNotHold(file: name + "/" + failure.file, reason: failure.reason)
            }
        }
        let sender = try side("sender", senderKey)
        let recipient = try side("recipient", recipientKey)
        func read(_ name: String) throws -> [UInt8] {
            do { return try FileBytes.read(directory + "/" + name, limit: EvidenceBundleCheck.maximumFileBytes) } catch {
                throw DoesNotHold(file: name, reason: "missing or unreadable")
            }
        }
        let manifest: [String: JSONValue]
        do { manifest = try JSONValue.parseObject(untrusted: try read("manifest.json")) } catch let failure as DoesNotHold { throw failure } catch {
            throw DoesNotHold(file: "manifest.json", reason: "not a \(TwoSidedEvidence.format) manifest (\(error))")
        }
        let format = manifest["format"]?.stringValue
        guard [TwoSidedEvidence.format, TwoSidedEvidence.formatWithoutLink].contains(format), let transferSub = manifest["transfer_sub"]?.stringValue,
            let entries = manifest["packages"]?.arrayValue
        else {
            throw DoesNotHold(file: "manifest.json", reason: "not a \(TwoSidedEvidence.format) manifest")
        }
        for (side, result) in [("sender", sender), ("recipient", recipient)] where result.subject != transferSub {
            throw DoesNotHold(file: side + "/manifest.json", reason: "its subject is not the bundle's transfer_sub \(transferSub)")
        }
        let senderEvents = try events(in: directory, "sender", sender.sequences)
        let recipientEvents = try events(in: directory, "recipient", recipient.sequences)
        // Every event of either side that names a transfer_sub names the person's.
        for (side, list) in [("sender", senderEvents), ("recipient", recipientEvents)] {
            if let other = list.first(where: { $0.identifiers.transferSub.map { !$0.utf8.elementsEqual(transferSub.utf8) } ?? false }) {
                throw DoesNotHold(
                    file: "\(side)/events/\(other.sequence).json", reason: "it is about another transfer_sub than the bundle's \(transferSub)")
            }
        }
        let packages = Packages(
            transferSub: transferSub, senderEvents: senderEvents, recipientEvents: recipientEvents,
            senderKey: try key(of: sender, "sender"), recipientKey: try key(of: recipient, "recipient"), read: read)
        var listed: [Int] = []
        var listedDigests: [Int: String] = [:]
        for entry in entries {
            guard let number = entry["package"]?.intValue.map(Int.init), let digest = entry["manifest_sha256"]?.stringValue,
                let acknowledged = entry["acknowledged"]?.boolValue, !listed.contains(number)
            else {
                throw DoesNotHold(
                    file: "manifest.json", reason: "an entry of packages is not {package, manifest_sha256, acknowledged} once per package")
            }
            listed.append(number)
            listedDigests[number] = digest
            let (manifest, received) = try packages.checkManifest(of: number, digest: digest)
            if format == TwoSidedEvidence.format {
                try packages.checkLink(of: number, manifest: manifest, to: sender)
            } else if FileManager.default.fileExists(atPath: directory + "/handoff/\(number)/\(TwoSidedEvidence.consistencyFile)") {
                throw DoesNotHold(
                    file: "handoff/\(number)/\(TwoSidedEvidence.consistencyFile)",
                    reason: "in a \(TwoSidedEvidence.formatWithoutLink) bundle, which has no such file")
            }
            let recorded = senderEvents.contains { e in
                guard case .handoffAcknowledged(let a) = e.body else { return false }
                return a.package == number && a.manifestSHA256 == digest
            }
            if acknowledged {
                try packages.checkAcknowledgement(of: number, digest: digest, manifest: manifest, received: received)
            } else if recorded || FileManager.default.fileExists(atPath: directory + "/handoff/\(number)/cosigned-checkpoint.txt") {
                throw DoesNotHold(
                    file: "manifest.json",
                    reason: "package \(number) is listed as not acknowledged, yet team A's receipt of it is in the bundle: the flag was changed")
            }
        }
        let present = Set((try? FileManager.default.contentsOfDirectory(atPath: directory + "/handoff")) ?? [])  // no handoff/: no package
        guard present == Set(listed.map(String.init)) else {
            throw DoesNotHold(
                file: "handoff", reason: "its directories (\(present.sorted().joined(separator: ", "))) are not the packages manifest.json lists")
        }
        try checkRows(of: recipient, in: directory, events: recipientEvents, packages: listedDigests, generations: senderEvents)
        // 5. The person asked about is one the bundle proves.
        let subject = manifest["subject"]?.stringValue ?? ""
        let proven = [sender, recipient].compactMap(\.completeness).flatMap(\.names).map(\.name)
        let known =
            proven.isEmpty
            ? (senderEvents + recipientEvents).flatMap { event in IdentifierKind.userKinds.compactMap { event.identifiers[$0] } }
            : proven.filter { $0.kind != PersonName.packageKind }.map(\.value)
        guard known.contains(subject) else {
            throw DoesNotHold(
                file: "manifest.json",
                reason: "its subject \(InertText.forScreen(subject)) is no one the two sides prove: the bundle is about someone else")
        }
        return Result(transferSub: transferSub, sender: sender, recipient: recipient, packages: listed)
    }

    /// Step 3, one listed package at a time: both sides' events and keys, and the bundle's files.
    private struct Packages {
        typealias DoesNotHold = EvidenceBundleCheck.DoesNotHold
        let transferSub: String
        let senderEvents: [RecordedEvent]
        let recipientEvents: [RecordedEvent]
        let senderKey: (name: String, key: [UInt8])
        let recipientKey: (name: String, key: [UInt8])
        let read: (String) throws -> [UInt8]

        /// 3.1 to 3.3: package `number`'s manifest file is the one both sides recorded with
        /// `digest`, signed by the sender for the recipient's team, holding both events'
        /// checkpoint, and the person's generation lies in its events. Its manifest, and the
        /// recipient's "handoff received" with its sequence.
        func checkManifest(of number: Int, digest: String) throws -> (HandoffManifest, received: UInt64) {
            let dir = "handoff/\(number)"
            // 3.1: the manifest file, its digest, and the received event's copy of it.
            let manifestBytes = try read(dir + "/manifest.txt")
            guard Hex.encode(SHA256.hash(data: manifestBytes)) == digest else {
                throw DoesNotHold(file: dir + "/manifest.txt", reason: "its SHA-256 is not the listed manifest_sha256")
            }
            guard
                let issued = senderEvents.lazy.compactMap({ e -> (HandoffIssued, UInt64)? in
                    if case .handoffIssued(let b) = e.body, b.package == number, b.manifestSHA256 == digest {
                        return (b, e.sequence)
                    } else {
                        return nil
                    }
                }).first
            else {
                throw DoesNotHold(file: "sender/events", reason: "no \"handoff issued\" of package \(number) with manifest \(digest)")
            }
            guard
                let received = recipientEvents.lazy.compactMap({ e -> (HandoffReceived, UInt64)? in
                    if case .handoffReceived(let b) = e.body, b.package == number, b.manifestSHA256 == digest {
                        return (b, e.sequence)
                    } else {
                        return nil
                    }
                }).first
            else {
                throw DoesNotHold(file: "recipient/events", reason: "no \"handoff received\" of package \(number) with manifest \(digest)")
            }
            guard received.0.manifest.utf8.elementsEqual(manifestBytes) else {
                throw DoesNotHold(file: dir + "/manifest.txt", reason: "it is not the manifest recipient/events/\(received.1).json holds")
            }
            // 3.2: signed by the sender's key, for the recipient's team, holding the events' checkpoint.
            let note: SignedNote
            let body: HandoffManifest
            do {
                note = try SignedNote(parsing: manifestBytes)
                body = try HandoffManifest(text: note.text)
            } catch { throw DoesNotHold(file: dir + "/manifest.txt", reason: ErrorText.describing(error)) }
            guard note.verify(name: senderKey.name, publicKey: senderKey.key) == .verified else {
                throw DoesNotHold(file: dir + "/manifest.txt", reason: "its signature does not verify with sender/verifier-key")
            }
            guard body.package == number, recipientKey.name.utf8.starts(with: "handover/\(body.targetTeam)/".utf8),
                UInt64(exactly: issued.0.previousTreeSize) == body.previousTreeSize
            else {
                throw DoesNotHold(file: dir + "/manifest.txt", reason: "it is not package \(number) for the recipient's team")
            }
            let checkpoint = body.checkpoint.text
            for (file, fields) in [
                ("sender/events/\(issued.1).json", issued.0.checkpoint), ("recipient/events/\(received.1).json", received.0.checkpoint),
            ] {
                // Unreadable fields: not this checkpoint.
                guard (try? fields.checkpoint().text).map({ $0.utf8.elementsEqual(checkpoint.utf8) }) == true else {
                    throw DoesNotHold(file: file, reason: "its checkpoint is not the one manifest \(dir)/manifest.txt holds")
                }
            }
            // 3.3: the person's generation lies in the package's events.
            guard
                senderEvents.contains(where: {
                    $0.type == .transferIDGenerated && $0.identifiers.transferSub == transferSub
                        && $0.sequence > body.previousTreeSize && $0.sequence <= body.checkpoint.treeSize
                })
            else {
                throw DoesNotHold(file: "sender/events", reason: "no \"transfer ID generated\" of \(transferSub) among package \(number)'s events")
            }
            return (body, received.1)
        }

        /// 3.5: the sender's checkpoint extends package `number`'s, by the bundle's consistency proof.
        func checkLink(of number: Int, manifest body: HandoffManifest, to sender: EvidenceBundleCheck.Result) throws {
            let file = "handoff/\(number)/\(TwoSidedEvidence.consistencyFile)"
            let lines = String(decoding: try read(file), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            let hashes = lines.last == "" ? lines.dropLast() : lines[...]
            let proof = hashes.map { Data(base64Encoded: String($0)).map(Array.init) ?? [] }
            guard proof.allSatisfy({ $0.count == 32 }),
                MerkleProof.verifyConsistency(
                    oldSize: body.checkpoint.treeSize, oldRoot: body.checkpoint.rootHash, newSize: sender.treeSize, newRoot: sender.rootHash,
                    proof: proof)
            else {
                throw DoesNotHold(
                    file: file,
                    reason: "it does not prove sender/checkpoint extends package \(number)'s checkpoint of \(body.checkpoint.treeSize) events")
            }
        }

        /// 3.4: the recipient's cosignature of package `number`'s checkpoint, as the sender
        /// recorded it with the recipient's event `received`.
        func checkAcknowledgement(of number: Int, digest: String, manifest body: HandoffManifest, received: UInt64) throws {
            let file = "handoff/\(number)/cosigned-checkpoint.txt"
            let cosigned: SignedNote
            do { cosigned = try SignedNote(parsing: try read(file)) } catch let failure as DoesNotHold { throw failure } catch {
                throw DoesNotHold(file: file, reason: ErrorText.describing(error))
            }
            let own = SignedNote.Signature(name: body.checkpoint.origin, keyID: body.checkpoint.keyID, bytes: body.checkpoint.signature)
            guard cosigned.text.utf8.elementsEqual(body.checkpoint.body.utf8), cosigned.signatures.count == 2, cosigned.signatures[0] == own,
                let (_, line) = Cosignature.verified(in: cosigned, name: recipientKey.name, publicKey: recipientKey.key),
                line == cosigned.signatures[1]
            else {
                throw DoesNotHold(file: file, reason: "it is not package \(number)'s checkpoint cosigned by recipient/verifier-key")
            }
            guard
                senderEvents.contains(where: { e in
                    guard case .handoffAcknowledged(let a) = e.body else { return false }
                    return a.package == number && a.manifestSHA256 == digest && a.recipientSequence == Int(received)
                        && a.cosignature == Data(line.keyID + line.bytes).base64EncodedString()
                })
            else {
                throw DoesNotHold(
                    file: "sender/events",
                    reason: "no \"handoff acknowledged\" of package \(number) with that cosignature and recipient event \(received)")
            }
        }
    }

    /// Step 4: each of the recipient's rows (each already proven to its roots) is the person's
    /// row of a listed package, its `seq` field the sender's "transfer ID generated".
    private static func checkRows(
        of recipient: EvidenceBundleCheck.Result, in directory: String, events: [RecordedEvent], packages: [Int: String],
        generations senderEvents: [RecordedEvent]
    ) throws {
        let generated = Set(senderEvents.filter { $0.type == .transferIDGenerated }.map(\.sequence))
        for (fact, _) in recipient.story where fact.kind == .row {
            let file = "recipient/" + fact.file
            let bytes = try FileBytes.read(directory + "/" + file, limit: EvidenceBundleCheck.maximumFileBytes)
            guard let proof = try? RowEvidence(json: JSONValue.parseObject(untrusted: bytes)) else {
                throw EvidenceBundleCheck.DoesNotHold(file: file, reason: "not a row with its paths")
            }
            guard proof.kind == .handoffRow else { continue }
            guard case .handoffRowsReceived(let chunk)? = events.first(where: { $0.sequence == fact.sequence })?.body, let package = chunk.package,
                packages[package] == chunk.manifestSHA256
            else {
                throw EvidenceBundleCheck.DoesNotHold(file: file, reason: "its package is not one manifest.json lists")
            }
            guard let sequence = HandoffRowLine(proof.row, form: .v2)?.sequenceNumber, generated.contains(sequence)
            else {
                throw EvidenceBundleCheck.DoesNotHold(
                    file: file, reason: "its row's seq is not the person's \"transfer ID generated\" in sender/events")
            }
        }
    }

    /// The events of one side, decoded (each already proved by ``EvidenceBundleCheck``).
    private static func events(in directory: String, _ side: String, _ sequences: [UInt64]) throws -> [RecordedEvent] {
        try sequences.map { sequence in
            let file = "\(side)/events/\(sequence).json"
            do {
                return try FileBytes.read(directory + "/" + file, limit: EvidenceBundleCheck.maximumFileBytes).withUnsafeBytes {
                    try RecordedEvent(json: $0)
                }
            } catch {
                throw EvidenceBundleCheck.DoesNotHold(file: file, reason: "not an event Handover can read (\(ErrorText.describing(error)))")
            }
        }
    }

    /// One side's verifier key, from the line its check read and accepted.
    private static func key(of side: EvidenceBundleCheck.Result, _ name: String) throws -> (name: String, key: [UInt8]) {
        guard let parts = Checkpoint.publicKey(fromVerifierKey: side.verifierKey) else {
            throw EvidenceBundleCheck.DoesNotHold(file: "\(name)/verifier-key", reason: "not a verifier key")
        }
        return parts
    }
}
