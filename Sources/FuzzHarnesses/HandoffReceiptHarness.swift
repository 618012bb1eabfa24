import Foundation
import Ledger
import Migration

extension Harness {
    /// Team B's receipt, as team A's `handoff confirm` checks it against its own ledger (the
    /// fixture sender, a copy): `cosigned-checkpoint.txt`, `handoff-received.json` and
    /// `handoff-received.tlog-proof`. Team B holds the key that signs its checkpoints and
    /// cosignatures, so the harness signs them (``FuzzFiles/receipt(_:)``): what the fuzzer
    /// writes is what B could have signed.
    static let handoffReceipt = Harness(
        "handoff-receipt", "team B's receipt (cosigned checkpoint, event, proof), checked and recorded by team A's confirm"
    ) { input in
        let (files, recipientKey) = FuzzFiles.receipt(input)
        let dir = FuzzWorkspace.files("handoff-receipt", files)
        let confirmation = ReceiptConfirmation(ledger: FuzzFixtures.senderLedgerForWrites, recipientKey: recipientKey)
        let outcome = try blocking { try await confirmation.confirm(dir) }
        HarnessCheck.expect(outcome.acknowledged.cosignedAt.isRepresentable, "a receipt was recorded with a cosignature time RFC 3339 cannot write")
    }
}
