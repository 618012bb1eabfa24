import AppleID
import Ledger

/// What happened to one identity token or notification handed to ``AppleIntake``.
public struct IntakeReceipt: Sendable {
    /// How the delivery ended.
    public enum Outcome: Sendable {
        /// Verified and recorded under this sequence number.
        case recorded(sequence: UInt64)
        /// Verified, and already recorded under this sequence number (a redelivery).
        case duplicate(of: UInt64)
        /// Refused; the refusal is recorded under this sequence number (or was already).
        case rejected(TokenRejection, sequence: UInt64)
    }

    public var outcome: Outcome
    /// The type of the event recorded (or found) for this delivery.
    public var eventType: EventType
    /// How long the ledger took to make the event durable.
    public var appendDuration: Duration
    /// Whether this delivery erased a user's personal data (account deleted, policy erase).
    public var erased: Bool

    /// The sequence number of the event that holds this delivery.
    public var sequence: UInt64 {
        switch outcome {
        case .recorded(let s), .duplicate(let s), .rejected(_, let s): return s
        }
    }

    /// The refusal, if the delivery was refused.
    public var rejection: TokenRejection? {
        if case .rejected(let rejection, _) = outcome { return rejection }
        return nil
    }
}
