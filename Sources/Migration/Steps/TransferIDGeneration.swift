import AppleID
import Ledger
import Projections

/// Team A's step: each user's `sub` becomes a `transfer_sub` for the target team.
public struct TransferIDGeneration: MigrationStep {
    public let targetTeam: String?
    private let target: String

    public init(targetTeam: String) {
        self.targetTeam = targetTeam
        self.target = targetTeam
    }

    public var command: String { "generate" }
    public var keyColumn: String { "sub" }
    public var role: LedgerCreated.Role { .sender }
    public var output: Answer<MigrationOutputRow> { MigrationOutputRow.generation }

    public func idempotencyKey(for user: MigrationUser) -> String { "generate:\(target):\(user.identifier)" }

    public func identifier(for user: MigrationUser) -> Identifier { Identifier(.senderSub, user.identifier) }

    public func perform(_ user: MigrationUser, session: AppleSession, runID: String) async throws -> EventDraft {
        let transferSub = try await session.generateTransferID(sub: user.identifier, target: target)
        return EventDraft(
            .transferIDGenerated(TransferIDGenerated(targetTeam: target)),
            identifiers: Identifiers(accountID: user.accountID, senderSub: user.identifier, transferSub: transferSub),
            idempotencyKey: idempotencyKey(for: user), runID: runID)
    }

    public func failureEvent(_ user: MigrationUser, failure: CallFailure, runID: String) -> EventDraft {
        EventDraft(
            .transferIDGenerationFailed(TransferIDGenerationFailed(targetTeam: target, failure: failure)),
            identifiers: Identifiers(accountID: user.accountID, senderSub: user.identifier), runID: runID)
    }

    public func outputRow(for user: MigrationUser, event: RecordedEvent, sealer: Sealer) throws -> MigrationOutputRow? {
        MigrationOutputRow(accountID: user.accountID ?? event.identifiers.accountID, transferSub: event.identifiers.transferSub)
    }
}
