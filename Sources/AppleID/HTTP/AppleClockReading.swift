import Foundation

/// Apple's clock as one answer shows it: the `Date` header, which has whole seconds and was
/// written at some moment between sending the request and receiving the answer.
///
/// The difference from the local clock is therefore known only within bounds; a slow answer
/// widens them instead of being taken for a wrong clock.
public struct AppleClockReading: Sendable, Equatable {
    /// Apple's `Date` header.
    public var appleDate: Date
    /// The local clock when the request was sent.
    public var sentAt: Date
    /// The local clock when the answer had arrived.
    public var receivedAt: Date

    /// The local clock minus Apple's: the least and greatest values the answer allows. Apple
    /// wrote its header within `[appleDate, appleDate + 1 s)` by its clock, and within
    /// `[sentAt, receivedAt]` by ours.
    public var offsetBounds: ClosedRange<TimeInterval> {
        let low = sentAt.timeIntervalSince(appleDate) - 1
        let high = receivedAt.timeIntervalSince(appleDate)
        return min(low, high)...max(low, high)
    }

    /// The offset nearest zero that the answer allows: 0 when the clocks may agree.
    public var offset: TimeInterval {
        let bounds = offsetBounds
        if bounds.contains(0) { return 0 }
        return bounds.lowerBound > 0 ? bounds.lowerBound : bounds.upperBound
    }

    /// How long the answer took.
    public var roundTrip: TimeInterval { receivedAt.timeIntervalSince(sentAt) }
}
