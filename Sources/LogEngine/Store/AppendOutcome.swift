import Basics

/// What became of one appended event.
public enum AppendOutcome: Hashable, Sendable {
    /// Written and durable under this sequence number.
    case recorded(sequence: UInt64, recordedAt: Timestamp)
    /// Not written: an event with the same idempotency key already has this sequence number.
    case duplicate(of: UInt64)

    /// The sequence number of the event now holding this content.
    public var sequence: UInt64 {
        switch self {
        case .recorded(let sequence, _): return sequence
        case .duplicate(let sequence): return sequence
        }
    }

    /// Whether this append wrote a new event.
    public var isRecorded: Bool { if case .recorded = self { return true } else { return false } }
}
