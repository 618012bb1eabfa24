import Basics

/// The type-specific part of an event; its case decides the event's ``EventType``.
public enum EventBody: Hashable, Sendable {
    case ledgerCreated(LedgerCreated)
    case transferAccepted(TransferAccepted)
    case runStarted(RunStarted)
    case runFinished(RunFinished)
    case accessTokenIssued(AccessTokenIssued)
    case accessTokenFailed(AccessTokenFailed)
    case transferIDGenerated(TransferIDGenerated)
    case transferIDGenerationFailed(TransferIDGenerationFailed)
    case transferIDExchanged(TransferIDExchanged)
    case transferIDExchangeFailed(TransferIDExchangeFailed)
    case signInVerified(SignInVerified)
    case signInRejected(TokenRejected)
    case notificationReceived(NotificationReceived)
    case notificationRejected(TokenRejected)
    case userErased(UserErased)
    case rejectionsSummarized(RejectionsSummarized)
    case handoffIssued(HandoffIssued)
    case handoffReceived(HandoffReceived)
    case handoffRefused(HandoffRefused)
    case handoffAcknowledged(HandoffAcknowledged)
    case handoffRowsReceived(HandoffRowsReceived)
    case applyStarted(ApplyStarted)
    case applyIntended(ApplyIntended)
    case applySettled(ApplySettled)
    case witnessCosigned(WitnessCosigned)
    case checkpointWitnessed(CheckpointWitnessed)
    case witnessRequestRefused(WitnessRequestRefused)
    case personIndexCommitted(PersonIndexCommitted)

    /// The event type this body belongs to.
    public var type: EventType {
        switch self {
        case .ledgerCreated: return .ledgerCreated
        case .transferAccepted: return .transferAccepted
        case .runStarted: return .runStarted
        case .runFinished: return .runFinished
        case .accessTokenIssued: return .accessTokenIssued
        case .accessTokenFailed: return .accessTokenFailed
        case .transferIDGenerated: return .transferIDGenerated
        case .transferIDGenerationFailed: return .transferIDGenerationFailed
        case .transferIDExchanged: return .transferIDExchanged
        case .transferIDExchangeFailed: return .transferIDExchangeFailed
        case .signInVerified: return .signInVerified
        case .signInRejected: return .signInRejected
        case .notificationReceived: return .notificationReceived
        case .notificationRejected: return .notificationRejected
        case .userErased: return .userErased
        case .rejectionsSummarized: return .rejectionsSummarized
        case .handoffIssued: return .handoffIssued
        case .handoffReceived: return .handoffReceived
        case .handoffRefused: return .handoffRefused
        case .handoffAcknowledged: return .handoffAcknowledged
        case .handoffRowsReceived: return .handoffRowsReceived
        case .applyStarted: return .applyStarted
        case .applyIntended: return .applyIntended
        case .applySettled: return .applySettled
        case .witnessCosigned: return .witnessCosigned
        case .checkpointWitnessed: return .checkpointWitnessed
        case .witnessRequestRefused: return .witnessRequestRefused
        case .personIndexCommitted: return .personIndexCommitted
        }
    }

    /// The batch body that commits to its rows by a Merkle root, when this is one (whatever
    /// its form: a v1 body keeps no rows beside it).
    public var rowCommitting: (any RowCommittingBody)? {
        switch self {
        case .handoffRowsReceived(let b): return b
        case .applyIntended(let b): return b
        case .applySettled(let b): return b
        default: return nil
        }
    }

    /// The rows the ledger stores beside this event in the `rows` database, in order; empty for
    /// every event but a v2 batch body with its rows.
    var storedRows: [[UInt8]] { rowCommitting?.rowLines ?? [] }

    /// Whether this is a v2 batch body read from its JSON alone, its rows not attached yet.
    public var lacksRows: Bool { rowCommitting?.lacksRows ?? false }

    /// How many lines the `rows` database holds for this event: those a v2 batch body keeps
    /// there (whether attached or not); 0 for every other event.
    public var keptRowCount: Int { rowCommitting?.keptRowCount ?? 0 }

    /// Gives a v2 batch body read from its JSON alone its rows as the `rows` database holds
    /// them, checked against its root; every other body stays as it is.
    mutating func attach(rowLines lines: [[UInt8]]) throws {
        switch self {
        case .handoffRowsReceived(var b) where b.lacksRows:
            try b.attach(rowLines: lines)
            self = .handoffRowsReceived(b)
        case .applyIntended(var b) where b.lacksRows:
            try b.attach(rowLines: lines)
            self = .applyIntended(b)
        case .applySettled(var b) where b.lacksRows:
            try b.attach(rowLines: lines)
            self = .applySettled(b)
        default:
            break
        }
    }

    func write(to w: inout JSONWriter) {
        switch self {
        case .ledgerCreated(let b): b.write(to: &w)
        case .transferAccepted(let b): b.write(to: &w)
        case .runStarted(let b): b.write(to: &w)
        case .runFinished(let b): b.write(to: &w)
        case .accessTokenIssued(let b): b.write(to: &w)
        case .accessTokenFailed(let b): b.write(to: &w)
        case .transferIDGenerated(let b): b.write(to: &w)
        case .transferIDGenerationFailed(let b): b.write(to: &w)
        case .transferIDExchanged(let b): b.write(to: &w)
        case .transferIDExchangeFailed(let b): b.write(to: &w)
        case .signInVerified(let b): b.write(to: &w)
        case .signInRejected(let b): b.write(to: &w)
        case .notificationReceived(let b): b.write(to: &w)
        case .notificationRejected(let b): b.write(to: &w)
        case .userErased(let b): b.write(to: &w)
        case .rejectionsSummarized(let b): b.write(to: &w)
        case .handoffIssued(let b): b.write(to: &w)
        case .handoffReceived(let b): b.write(to: &w)
        case .handoffRefused(let b): b.write(to: &w)
        case .handoffAcknowledged(let b): b.write(to: &w)
        case .handoffRowsReceived(let b): b.write(to: &w)
        case .applyStarted(let b): b.write(to: &w)
        case .applyIntended(let b): b.write(to: &w)
        case .applySettled(let b): b.write(to: &w)
        case .witnessCosigned(let b): b.write(to: &w)
        case .checkpointWitnessed(let b): b.write(to: &w)
        case .witnessRequestRefused(let b): b.write(to: &w)
        case .personIndexCommitted(let b): b.write(to: &w)
        }
    }

    init(type: EventType, reading r: FieldReader) throws {
        switch type {
        case .ledgerCreated: self = .ledgerCreated(try LedgerCreated(reading: r))
        case .transferAccepted: self = .transferAccepted(try TransferAccepted(reading: r))
        case .runStarted: self = .runStarted(try RunStarted(reading: r))
        case .runFinished: self = .runFinished(try RunFinished(reading: r))
        case .accessTokenIssued: self = .accessTokenIssued(try AccessTokenIssued(reading: r))
        case .accessTokenFailed: self = .accessTokenFailed(try AccessTokenFailed(reading: r))
        case .transferIDGenerated: self = .transferIDGenerated(try TransferIDGenerated(reading: r))
        case .transferIDGenerationFailed: self = .transferIDGenerationFailed(try TransferIDGenerationFailed(reading: r))
        case .transferIDExchanged: self = .transferIDExchanged(try TransferIDExchanged(reading: r))
        case .transferIDExchangeFailed: self = .transferIDExchangeFailed(try TransferIDExchangeFailed(reading: r))
        case .signInVerified: self = .signInVerified(try SignInVerified(reading: r))
        case .signInRejected: self = .signInRejected(try TokenRejected(reading: r))
        case .notificationReceived: self = .notificationReceived(try NotificationReceived(reading: r))
        case .notificationRejected: self = .notificationRejected(try TokenRejected(reading: r))
        case .userErased: self = .userErased(try UserErased(reading: r))
        case .rejectionsSummarized: self = .rejectionsSummarized(try RejectionsSummarized(reading: r))
        case .handoffIssued: self = .handoffIssued(try HandoffIssued(reading: r))
        case .handoffReceived: self = .handoffReceived(try HandoffReceived(reading: r))
        case .handoffRefused: self = .handoffRefused(try HandoffRefused(reading: r))
        case .handoffAcknowledged: self = .handoffAcknowledged(try HandoffAcknowledged(reading: r))
        case .handoffRowsReceived: self = .handoffRowsReceived(try HandoffRowsReceived(reading: r))
        case .applyStarted: self = .applyStarted(try ApplyStarted(reading: r))
        case .applyIntended: self = .applyIntended(try ApplyIntended(reading: r))
        case .applySettled: self = .applySettled(try ApplySettled(reading: r))
        case .witnessCosigned: self = .witnessCosigned(try WitnessCosigned(reading: r))
        case .checkpointWitnessed: self = .checkpointWitnessed(try CheckpointWitnessed(reading: r))
        case .witnessRequestRefused: self = .witnessRequestRefused(try WitnessRequestRefused(reading: r))
        case .personIndexCommitted: self = .personIndexCommitted(try PersonIndexCommitted(reading: r))
        }
    }
}
