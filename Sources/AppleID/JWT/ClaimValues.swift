import Basics
import Foundation

extension String: ClaimValue {
    static var expected: String { "a string" }
    init?(claim: any SingleValueDecodingContainer) {
        guard let value = try? claim.decode(String.self) else { return nil }
        self = value
    }
}

extension Bool: ClaimValue {
    static var expected: String { "true or false" }
    /// `true`/`false`, the strings `"true"`/`"false"` (any case), or 0/1.
    init?(claim: any SingleValueDecodingContainer) {
        if let value = try? claim.decode(Bool.self) {
            self = value
        } else if let number = try? claim.decode(Double.self), number == 0 || number == 1 {
            self = number == 1
        } else if let text = try? claim.decode(String.self), ["true", "false"].contains(text.lowercased()) {
            self = text.lowercased() == "true"
        } else {
            return nil
        }
    }
}

/// A whole number read leniently: a JSON integer, a number whose fraction is dropped, or a
/// numeric string.
private func wholeNumber(_ claim: any SingleValueDecodingContainer) -> Int64? {
    if let value = try? claim.decode(Int64.self) { return value }
    if let value = try? claim.decode(Double.self) { return value.isFinite && abs(value) < 1e15 ? Int64(value.rounded(.down)) : nil }
    if let text = try? claim.decode(String.self) { return Int64(text) }
    return nil
}

/// A claim that is a whole number in a range, read leniently (``wholeNumber(_:)``).
protocol WholeNumberClaim: ClaimValue {
    /// The numbers accepted.
    static var allowed: ClosedRange<Int64> { get }
    /// The number as sent.
    var raw: Int64 { get }
    init(raw: Int64)
}

extension WholeNumberClaim {
    init?(claim: any SingleValueDecodingContainer) {
        guard let raw = wholeNumber(claim), Self.allowed.contains(raw) else { return nil }
        self.init(raw: raw)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(raw)
    }
}

/// A NumericDate: whole seconds from 1970 to the end of 9999 (a time RFC 3339 can write), so
/// that no arithmetic on one (a leeway, a conversion to microseconds) can overflow.
struct NumericDate: WholeNumberClaim {
    static let allowed: ClosedRange<Int64> = 0...Timestamp.latest.seconds
    static var expected: String { "a number of seconds from 1970 to 9999" }
    let raw: Int64

    var seconds: Int64 { raw }
    var date: Date { Date(seconds: raw) }
}

/// Apple's `event_time`: seconds, as Apple's page shows it, or milliseconds, as deliveries have
/// carried it; a value beyond 10^11 (year 5138 in seconds) is milliseconds.
struct EventTime: WholeNumberClaim {
    static let allowed: ClosedRange<Int64> = 0...(Timestamp.latest.microseconds / 1000)
    static var expected: String { "a number of seconds or milliseconds from 1970 to 9999" }
    let raw: Int64

    var date: Date { raw > 100_000_000_000 ? Date(timeIntervalSince1970: Double(raw) / 1000) : Date(seconds: raw) }
}

/// A small integer (below a billion either way), as a number or a numeric string.
struct SmallInteger: ClaimValue {
    static var expected: String { "an integer below a billion" }
    let value: Int

    init?(claim: any SingleValueDecodingContainer) {
        let allowed = -999_999_999...999_999_999
        if let number = try? claim.decode(Double.self) {
            guard number == number.rounded(), abs(number) < 1e9 else { return nil }
            value = Int(number)
        } else if let text = try? claim.decode(String.self), let number = Int(text), allowed.contains(number) {
            value = number
        } else {
            return nil
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// `aud`: one string, or a non-empty array of strings.
struct Audiences: ClaimValue {
    static var expected: String { "a string or an array of strings" }
    let values: [String]

    init?(claim: any SingleValueDecodingContainer) {
        if let one = try? claim.decode(String.self) {
            values = [one]
        } else if let many = try? claim.decode([String].self), !many.isEmpty {
            values = many
        } else {
            return nil
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(values)
    }
}

extension Date {
    init(seconds: Int64) { self.init(timeIntervalSince1970: TimeInterval(seconds)) }

    var rfc3339: String { ISO8601DateFormatter().string(from: self) }
}
