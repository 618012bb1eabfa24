import Basics
import Ledger
import LogEngine

/// The 60-day window that starts when the app transfer is accepted.
public struct TransferWindow: Hashable, Sendable {
    public var acceptedAt: Timestamp
    public var windowDays: Int
    /// The sequence number of the "transfer accepted" event it comes from.
    public var sequence: UInt64

    /// When Apple stops answering migration calls.
    public var deadline: Timestamp { acceptedAt.adding(days: windowDays) }

    /// Whole days left at `time` (0 once the deadline has passed).
    public func daysLeft(at time: Timestamp) -> Int {
        let remaining = deadline.microseconds - time.microseconds
        guard remaining > 0 else { return 0 }
        return Int((remaining + 86_400_000_000 - 1) / 86_400_000_000)
    }

    /// Whether the window is still open at `time`.
    public func isOpen(at time: Timestamp) -> Bool { time >= acceptedAt && !hasClosed(at: time) }

    /// Whether the deadline has passed at `time`: Apple answers no migration call any more.
    public func hasClosed(at time: Timestamp) -> Bool { time >= deadline }
}

extension TransferWindow {
    var encoded: [UInt8] {
        var w = BinaryWriter()
        w.u64(UInt64(bitPattern: acceptedAt.microseconds))
        w.u32(UInt32(windowDays))
        w.u64(sequence)
        return w.bytes
    }

    init(encoded raw: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(raw)
        acceptedAt = try r.time("transfer window")
        windowDays = Int(try r.u32())
        sequence = try r.u64()
        guard TransferAccepted.windowDaysAllowed.contains(windowDays) else {
            throw LedgerError(
                .malformedRecord,
                "transfer window: \(windowDays) days, not \(TransferAccepted.windowDaysAllowed.lowerBound) to \(TransferAccepted.windowDaysAllowed.upperBound)"
            )
        }
    }
}
