import AppleID
import Ledger
import Projections

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
        /// Refused and not recorded one by one: its source is over the flood guard's budget
        /// (the caller sums such refusals up in a "rejections summarized" event).
        case suppressed(TokenRejection, payloadSHA256: String)
    }

    public var outcome: Outcome
    /// The type of the event recorded (or found) for this delivery.
    public var eventType: EventType
    /// How long the ledger took to make the event durable.
    public var appendDuration: Duration
    /// Whether this delivery erased a user's personal data (account deleted, policy erase).
    public var erased: Bool
    /// For a verified sign-in: which account the user is, as the projections know after
    /// recording it (looked up by `transfer_sub` when the token has one, else by `sub`).
    public var lookup: UserLookup?

    /// The sequence number of the event that holds this delivery; 0 (no event has it) for a
    /// suppressed refusal.
    public var sequence: UInt64 {
        switch outcome {
        case .recorded(let s), .duplicate(let s), .rejected(_, let s): return s
        case .suppressed: return 0
        }
    }

    /// Whether the delivery was a redelivery of one recorded before.
    public var isDuplicate: Bool { if case .duplicate = outcome { return true } else { return false } }

    /// The refusal, if the delivery was refused.
    public var rejection: TokenRejection? {
        switch outcome {
        case .rejected(let rejection, _), .suppressed(let rejection, _): return rejection
        case .recorded, .duplicate: return nil
        }
    }
}
