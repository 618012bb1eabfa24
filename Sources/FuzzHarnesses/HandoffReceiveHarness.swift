import Foundation
import Ledger
import Migration
import Projections

extension Harness {
    /// A handoff package from team A taken into team B's ledger as `handoff receive` takes it,
    /// each input into a fresh copy of a new, empty recipient ledger (so a first package is
    /// recorded, not found received before). The input is the package harness's (`manifest.txt
    /// ~~~~ rows.csv ~~~~ consistency.txt`, the manifest and its checkpoints signed by the
    /// harness with the pinned key); what the package's checks let through is recorded, chunk
    /// by chunk, and received again.
    static let handoffReceive = Harness(
        "handoff-receive", "a handoff package received into team B's ledger (its rows recorded in chunks), then received again"
    ) { input in
        let (files, senderKey) = FuzzFiles.handoffPackage(input)
        let dir = FuzzWorkspace.files("handoff-receive-package", files)
        let projection = UserProjection()
        let ledger: Ledger
        do { ledger = try Ledger.open(at: FuzzWorkspace.copy(HandoffReceiveLedger.empty, as: "handoff-receive-ledger"), folders: [projection]) } catch
        {
            fatalError("cannot open a copy of the empty recipient ledger: \(error)")
        }
        defer { ledger.close() }
        let acceptance = HandoffAcceptance(ledger: ledger, package: HandoffPackage(path: dir), senderKey: senderKey)
        let received = try blocking { try await acceptance.receive() }
        let rows = received.verified.rows.count
        HarnessCheck.expect(
            received.rows.rows == rows, "a receive recorded \(received.rows.rows) rows of a package of \(rows)")
        let again = try blocking { try await acceptance.receive() }
        HarnessCheck.expect(
            again.verified.wasReceivedBefore && again.rows.chunks == 0, "a package received twice recorded something the second time")
        let report = try ledger.verify()
        HarnessCheck.expect(report.isIntact, "a received package left a log that does not verify: \(report.problem ?? "")")
    }
}

/// A new recipient ledger, made once per process in the workspace, for the packages to land in.
enum HandoffReceiveLedger {
    /// Its path: team B of the fixtures' rehearsal, nothing received.
    static let empty: String = {
        let path = FuzzWorkspace.path + "/empty-recipient"
        do {
            let created = LedgerCreated(
                teamID: "BBBB222222", clientIDs: ["com.example.notes"], role: .recipient, ledgerID: "fuzz-empty-recipient")
            try blocking { try await Ledger.create(at: path, created, folders: [UserProjection()]).close() }
        } catch {
            fatalError("cannot make an empty recipient ledger in \(path): \(error)")
        }
        return path
    }()
}
