import Foundation
import Ledger
import Reporting

extension Harness {
    /// An evidence bundle, as `handover evidence verify` checks it with no ledger: the parts are
    /// the checkpoint, `manifest.json`, then the event files; the harness signs the checkpoint
    /// (fixture sender's key) over a tree holding each event at its `seq` and writes valid proofs.
    static let evidenceBundle = Harness("evidence-bundle", "a one-sided evidence bundle (checkpoint, manifest, events), checked as evidence verify does") { input in
        let parts = FuzzInput(input, parts: 12)
        let side = FuzzBundleSide(checkpoint: parts[0], manifest: parts[1], events: parts.parts.dropFirst(2).filter { !$0.isEmpty }, key: FuzzFixtures.key("sender"))
        let dir = FuzzWorkspace.files("evidence-bundle", side.files)
        let result = try EvidenceBundleCheck.run(dir)
        HarnessCheck.expect(result.sequences.allSatisfy { $0 >= 1 && $0 <= result.treeSize }, "a bundle holds was proved with an event outside its checkpoint")
    }

    /// A two-sided evidence bundle. Parts: the top `manifest.json`; team A's checkpoint and
    /// manifest; team B's checkpoint and manifest; the package's `manifest.txt` and
    /// `cosigned-checkpoint.txt`; then team A's events, a part `recipient`, team B's events.
    /// The harness signs as each team would (fixture keys): the checkpoints, the package
    /// manifest and its checkpoint, the cosignature.
    static let twoSidedBundle = Harness("two-sided-bundle", "a two-sided evidence bundle (both sides, a package's manifest and cosigned checkpoint), checked as evidence verify does") { input in
        let parts = FuzzInput(input, parts: 24)
        let senderKey = FuzzFixtures.key("sender"), recipientKey = FuzzFixtures.key("recipient")
        let events = parts.parts.dropFirst(7).filter { !$0.isEmpty }
        let divider = events.firstIndex(of: Array("recipient".utf8)) ?? events.endIndex
        let sender = FuzzBundleSide(checkpoint: parts[1], manifest: parts[2], events: Array(events[..<divider]), key: senderKey)
        let recipient = FuzzBundleSide(checkpoint: parts[3], manifest: parts[4], events: Array(events[divider...].dropFirst()), key: recipientKey)
        let package = (try? JSONValue.parse(parts[0]))?["packages"]?.arrayValue?.first?["package"]?.intValue ?? 1
        let manifest = FuzzSigning.manifest(parts[5], key: senderKey).file
        let cosigned = FuzzSigning.cosigned(parts[6], name: recipient.origin, key: recipientKey)
        let dir = FuzzWorkspace.files("two-sided-bundle", [("manifest.json", parts[0]), ("handoff/\(package)/manifest.txt", manifest), ("handoff/\(package)/cosigned-checkpoint.txt", cosigned)]
            + sender.files.map { ("sender/" + $0.0, $0.1) } + recipient.files.map { ("recipient/" + $0.0, $0.1) })
        let result = try TwoSidedEvidenceCheck.run(dir)
        HarnessCheck.expect(Set(result.packages).count == result.packages.count, "a two-sided bundle was proved with a package listed twice")
    }
}
