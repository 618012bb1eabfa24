import Basics
import Foundation

/// What became of one witness in a round.
public enum WitnessOutcome: Equatable, Sendable {
    /// The witness cosigned the checkpoint after checking a proof from `oldSize`; recorded.
    case cosigned(oldSize: UInt64, timestamp: UInt64)
    /// The witness had cosigned this very checkpoint before (its event is in the log).
    case alreadyCosigned(timestamp: UInt64)
    /// The witness holds a larger tree of this log than the checkpoint: it was shown a
    /// checkpoint this ledger does not have, or this ledger lost events.
    case ahead(size: UInt64)
    /// The witness found the checkpoint inconsistent with what it cosigned before (422).
    case inconsistent(String)
    /// The witness refused the request (4xx): a configuration to mend.
    case refused(status: Int, String)
    /// The witness did not answer, or could not now (429, 5xx), after every attempt.
    case unavailable(status: Int, String)
    /// The witness answered what the protocol does not allow.
    case garbled(status: Int, String)

    /// Whether the witness now vouches for the checkpoint.
    public var holds: Bool {
        switch self {
        case .cosigned, .alreadyCosigned: true
        default: false
        }
    }

    /// Whether the answer says two views of this log exist: a witness that saw another history
    /// (422) or a larger tree than this ledger's latest checkpoint.
    public var showsSplitView: Bool {
        switch self {
        case .inconsistent, .ahead: true
        default: false
        }
    }

    /// One line for the operator.
    public var summary: String {
        switch self {
        case .cosigned(let old, let timestamp): "cosigned at \(Self.time(timestamp)) (proof from \(old))"
        case .alreadyCosigned(let timestamp): "cosigned before, at \(Self.time(timestamp))"
        case .ahead(let size):
            "REFUSED: the witness holds a tree of \(size) events, larger than this checkpoint: it was shown a checkpoint of this log that this ledger does not have, or events were lost here"
        case .inconsistent(let why):
            "REFUSED as inconsistent (422: \(why)): the witness cosigned a checkpoint of this log that this ledger does not extend, a sign of a rewritten or forked log"
        case .refused(let status, let why):
            "refused (\(status): \(why)): check the witness's URL and key, and that it knows this log's origin and key"
        case .unavailable(let status, let why): "unavailable (\(status == 0 ? "no answer" : String(status))): \(why); run again later"
        case .garbled(let status, let why): "answered what tlog-witness does not allow (\(status)): \(why)"
        }
    }

    /// A cosignature's timestamp (seconds since the epoch, as tlog-cosignature carries it) as
    /// every other time is printed: RFC 3339.
    static func time(_ seconds: UInt64) -> String {
        Timestamp(checkedSeconds: Int64(clamping: seconds))?.rfc3339 ?? "\(seconds) s after 1970 (past the year 9999)"
    }
}
