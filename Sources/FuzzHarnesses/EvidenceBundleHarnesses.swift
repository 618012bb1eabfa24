import Reporting

extension Harness {
    /// An evidence bundle, as `handover evidence verify` checks it with no ledger: the parts are
    /// the checkpoint, `manifest.json`, then the event files; the harness signs the checkpoint
    /// (fixture sender's key) over a tree holding each event at its `seq` and writes valid proofs.
    static let evidenceBundle = Harness(
        "evidence-bundle", "a one-sided evidence bundle (checkpoint, manifest, events), checked as evidence verify does"
    ) { input in
        let result = try EvidenceBundleCheck.run(FuzzWorkspace.files("evidence-bundle", FuzzFiles.evidenceBundle(input)))
        HarnessCheck.expect(
            result.sequences.allSatisfy { $0 >= 1 && $0 <= result.treeSize }, "a bundle was proved with an event outside its checkpoint")
    }

    /// A two-sided evidence bundle (``FuzzFiles/twoSidedBundle(_:)``), each team's part signed
    /// as that team would: the checkpoints, the package manifest and its checkpoint, the cosignature.
    static let twoSidedBundle = Harness(
        "two-sided-bundle", "a two-sided evidence bundle (both sides, a package's manifest and cosigned checkpoint), checked as evidence verify does"
    ) { input in
        let result = try TwoSidedEvidenceCheck.run(FuzzWorkspace.files("two-sided-bundle", FuzzFiles.twoSidedBundle(input)))
        HarnessCheck.expect(Set(result.packages).count == result.packages.count, "a two-sided bundle was proved with a package listed twice")
    }
}
