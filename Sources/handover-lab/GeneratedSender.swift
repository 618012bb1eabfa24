import Ledger
import Projections

/// Team A's ledger of N "transfer ID generated" events for team BBBB222222, user `i` being
/// `acct-i` with the scrambled `transfer_sub` of ``HandoffPairCommand/transferSub(_:)``: what
/// `handoff-pair` and `handoff-package` hand over.
enum GeneratedSender {
    /// Creates the ledger at `directory` (open, with its projections) and appends the users, 4,096 per batch.
    static func create(at directory: String, users: Int, clientID: String, ledgerID: String, options: Ledger.Options) async throws -> Ledger {
        let ledger = try await Ledger.create(
            at: directory, LedgerCreated(teamID: "AAAA111111", clientIDs: [clientID], role: .sender, ledgerID: ledgerID),
            folders: [UserProjection()], options: options)
        for first in stride(from: 0, to: users, by: 4_096) {
            _ = try await ledger.append(
                contentsOf: (first..<min(first + 4_096, users)).map { i in
                    EventDraft(
                        .transferIDGenerated(TransferIDGenerated(targetTeam: "BBBB222222")),
                        identifiers: Identifiers(accountID: "acct-\(i)", senderSub: "000\(i).sender", transferSub: HandoffPairCommand.transferSub(i)),
                        idempotencyKey: "generate:BBBB222222:000\(i).sender")
                })
        }
        return ledger
    }
}
