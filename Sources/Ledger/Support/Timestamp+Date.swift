import Foundation

extension Timestamp {
    /// The instant `date` names, to the microsecond.
    public init(_ date: Date) { self.init(microseconds: Int64((date.timeIntervalSince1970 * 1_000_000).rounded())) }
}

extension Date {
    /// The instant `time` names.
    public init(_ time: Timestamp) { self.init(timeIntervalSince1970: Double(time.microseconds) / 1_000_000) }
}
