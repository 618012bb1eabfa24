import Basics

/// Body of "transfer accepted": the app-transfer date, which starts the 60-day window.
public struct TransferAccepted: Hashable, Sendable {
    public var acceptedAt: Timestamp
    public var windowDays: Int

    /// The window lengths a ledger accepts, in days: Apple's is 60; a value from outside beyond
    /// ten years is no transfer window, and is refused before any date is computed from it.
    public static let windowDaysAllowed = 1...3650

    public init(acceptedAt: Timestamp, windowDays: Int = 60) {
        self.acceptedAt = acceptedAt
        self.windowDays = windowDays
    }

    /// When Apple stops answering migration calls for this transfer.
    public var deadline: Timestamp { acceptedAt.adding(days: windowDays) }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("accepted_at", acceptedAt)
        w.field("deadline", deadline)
        w.field("window_days", windowDays)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(acceptedAt: try r.timestamp("accepted_at"), windowDays: try r.int("window_days", in: TransferAccepted.windowDaysAllowed))
        guard try r.timestamp("deadline") == deadline else {
            throw LedgerError(.malformedRecord, "\(r.context).deadline: does not equal accepted_at + window_days")
        }
    }
}
