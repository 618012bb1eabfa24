import Foundation

extension Timestamp {
    /// The instant `date` names, to the microsecond, for dates this program has (the clock, a
    /// time it computed); outside years 0000 to 9999 it is the nearest end. A date from outside
    /// is checked first (a token's times are, as ``init(checkedSeconds:)`` checks them).
    public init(_ date: Date) {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        if micros.isNaN || micros < Double(Timestamp.earliest.microseconds) {
            self = .earliest
        } else if micros > Double(Timestamp.latest.microseconds) {
            self = .latest
        } else {
            // The bounds are not exact as doubles: the conversion is safe, the last microsecond is clamped.
            self = min(max(Timestamp(microseconds: Int64(micros)), .earliest), .latest)
        }
    }
}

extension Date {
    /// The instant `time` names.
    public init(_ time: Timestamp) { self.init(timeIntervalSince1970: Double(time.microseconds) / 1_000_000) }
}
