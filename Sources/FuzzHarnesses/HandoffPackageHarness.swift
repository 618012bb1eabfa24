import Ledger
import Migration

extension Harness {
    /// A handoff package from team A, as team B's exchange checks it before any call to Apple:
    /// `manifest.txt`, `rows.csv` and `consistency.txt`, the manifest and its checkpoints signed
    /// with the pinned key by the harness (under the origin the input names).
    static let handoffPackage = Harness(
        "handoff-package", "a handoff package (manifest, rows, consistency file) read and checked against the pinned sender key"
    ) { input in
        let (files, senderKey) = FuzzFiles.handoffPackage(input)
        let dir = FuzzWorkspace.files("handoff-package", files)
        var digest: String?
        let read = try HandoffPackageReader.read(HandoffPackage(path: dir), senderKey: senderKey, manifestDigest: &digest)
        HarnessCheck.expect(digest == read.manifestSHA256, "the refusal's manifest digest is not the manifest's")
        let rows = try read.rows.all()
        HarnessCheck.expect(
            read.rows.count == read.manifest.rowCount && rows.count == read.rows.count,
            "a package was read with another number of rows than its manifest says")
        HarnessCheck.expect(zip(rows, rows.dropFirst()).allSatisfy { $0.sequence < $1.sequence }, "a package's rows are not in event order")
        HarnessCheck.expect(
            rows.allSatisfy { $0.sequence > read.manifest.previousTreeSize && $0.sequence <= read.manifest.checkpoint.treeSize },
            "a package lists an event outside its checkpoint's new events")
    }
}
