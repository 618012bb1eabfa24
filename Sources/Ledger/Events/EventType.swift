/// The kinds of event the ledger records (docs/architecture.md, "Event catalogue"; one schema
/// each in schemas/events/).
public enum EventType: String, CaseIterable, Sendable, Hashable {
    case ledgerCreated = "ledger-created"
    case transferAccepted = "transfer-accepted"
    case runStarted = "run-started"
    case runFinished = "run-finished"
    case accessTokenIssued = "access-token-issued"
    case accessTokenFailed = "access-token-failed"
    case transferIDGenerated = "transfer-id-generated"
    case transferIDGenerationFailed = "transfer-id-generation-failed"
    case transferIDExchanged = "transfer-id-exchanged"
    case transferIDExchangeFailed = "transfer-id-exchange-failed"
    case signInVerified = "sign-in-verified"
    case signInRejected = "sign-in-rejected"
    case notificationReceived = "notification-received"
    case notificationRejected = "notification-rejected"
    case userErased = "user-erased"
    case rejectionsSummarized = "rejections-summarized"
    case handoffIssued = "handoff-issued"
    case handoffReceived = "handoff-received"
    case handoffRefused = "handoff-refused"
    case handoffAcknowledged = "handoff-acknowledged"
    case handoffRowsReceived = "handoff-rows-received"
    case applyStarted = "apply-started"
    case applyIntended = "apply-intended"
    case applySettled = "apply-settled"
    case witnessCosigned = "witness-cosigned"
    case checkpointWitnessed = "checkpoint-witnessed"
    case witnessRequestRefused = "witness-request-refused"
    case personIndexCommitted = "person-index-committed"

    /// The schema version written for this type today.
    public var schemaVersion: Int { 1 }
}
