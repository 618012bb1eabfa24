import Basics
import Foundation
import Ledger
import LogEngine

/// A fuzzer input written out as the files a user's command reads, signed as the party that
/// sends them would sign them: what a harness hands to the code, and what a test hands to the
/// command (`handoff confirm`, `evidence verify`) to show a fail case is refused there too.
public enum FuzzFiles {
    /// Files by path relative to their directory (a path ending in `/` is an empty directory).
    public typealias Files = [(String, [UInt8])]

    /// Writes `files` into `directory`, made if missing.
    public static func write(_ files: Files, into directory: String) throws {
        for (file, bytes) in files {
            let path = directory + "/" + file
            if file.hasSuffix("/") {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                continue
            }
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { throw LedgerError(.file, "cannot write \(path)") }
        }
    }

    /// A handoff package from the parts manifest, rows, consistency file, signed with team A's
    /// fixture key under the origin the manifest's checkpoint names; and that pinned key.
    public static func handoffPackage(_ input: [UInt8]) -> (files: Files, senderKey: VerifierKey) {
        let parts = FuzzInput(input, parts: 3)
        let key = FuzzFixtures.key("sender")
        let (manifest, origin) = FuzzSigning.manifest(parts[0], key: key)
        let files: Files = [
            (HandoffPackage.manifestFile, manifest), (HandoffPackage.rowsFile, parts[1]),
            (HandoffPackage.consistencyFile, FuzzSigning.afterHeader(parts[2], key: key)),
        ]
        return (files, VerifierKey(name: origin, publicKey: key.publicKey))
    }

    /// Team B's receipt from the parts cosigned checkpoint, event, proof: B's checkpoint over
    /// the event and B's cosignature signed with team B's fixture key, under the origin the
    /// proof's checkpoint names; and that pinned key.
    public static func receipt(_ input: [UInt8]) -> (files: Files, recipientKey: VerifierKey) {
        let parts = FuzzInput(input, parts: 3)
        let key = FuzzFixtures.key("recipient")
        let event = parts[1]
        var proofFile = parts[2]
        var origin = ""
        if let proof = try? TlogProof(parsing: String(decoding: parts[2], as: UTF8.self)),
            let checkpoint = try? Checkpoint(parsing: proof.checkpointText),
            let root = MerkleProof.root(leafHash: MerkleHash.leaf(event), index: proof.index, treeSize: checkpoint.treeSize, path: proof.path),
            let signed = try? Checkpoint(origin: checkpoint.origin, treeSize: checkpoint.treeSize, rootHash: root, time: checkpoint.time, key: key)
        {
            origin = checkpoint.origin
            proofFile = Array(TlogProof(index: proof.index, path: proof.path, checkpointText: signed.text).text.utf8)
        }
        let cosigned = FuzzSigning.cosigned(parts[0], name: origin, key: key)
        return (
            [(HandoffReceipt.cosignedFile, cosigned), (HandoffReceipt.eventFile, event), (HandoffReceipt.proofFile, proofFile)],
            VerifierKey(name: origin, publicKey: key.publicKey)
        )
    }

    /// A one-sided evidence bundle from the parts checkpoint, manifest, events (``FuzzBundleSide``).
    public static func evidenceBundle(_ input: [UInt8]) -> Files {
        let parts = FuzzInput(input, parts: 12)
        return FuzzBundleSide(
            checkpoint: parts[0], manifest: parts[1], events: parts.parts.dropFirst(2).filter { !$0.isEmpty }, key: FuzzFixtures.key("sender")
        ).files
    }

    /// A two-sided evidence bundle from the parts top manifest; A's checkpoint and manifest;
    /// B's checkpoint and manifest; the package's manifest and cosigned checkpoint; A's events,
    /// a part `recipient`, B's events. Each team's part is signed with its fixture key.
    public static func twoSidedBundle(_ input: [UInt8]) -> Files {
        let parts = FuzzInput(input, parts: 24)
        let senderKey = FuzzFixtures.key("sender")
        let recipientKey = FuzzFixtures.key("recipient")
        let events = parts.parts.dropFirst(7).filter { !$0.isEmpty }
        let divider = events.firstIndex(of: Array("recipient".utf8)) ?? events.endIndex
        let sender = FuzzBundleSide(checkpoint: parts[1], manifest: parts[2], events: Array(events[..<divider]), key: senderKey)
        let recipient = FuzzBundleSide(checkpoint: parts[3], manifest: parts[4], events: Array(events[divider...].dropFirst()), key: recipientKey)
        let package = (try? JSONValue.parse(parts[0]))?["packages"]?.arrayValue?.first?["package"]?.intValue ?? 1
        let manifest = FuzzSigning.manifest(parts[5], key: senderKey).file
        let cosigned = FuzzSigning.cosigned(parts[6], name: recipient.origin, key: recipientKey)
        return [("manifest.json", parts[0]), ("handoff/\(package)/manifest.txt", manifest), ("handoff/\(package)/cosigned-checkpoint.txt", cosigned)]
            + sender.files.map { ("sender/" + $0.0, $0.1) } + recipient.files.map { ("recipient/" + $0.0, $0.1) }
    }
}
