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
}

extension TransferAccepted: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        let accepted = Self(
            acceptedAt: try c.field("accepted_at", v?.acceptedAt), windowDays: try c.field("window_days", v?.windowDays, in: windowDaysAllowed))
        guard try c.field("deadline", v?.deadline) == accepted.deadline else {
            throw c.refuse("deadline", "does not equal accepted_at + window_days")
        }
        return accepted
    }
}
