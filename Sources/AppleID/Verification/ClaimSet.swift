import Foundation
import Ledger

/// Typed, lenient reads of a JWT's claims, as Apple sends them: Booleans that may be
/// strings (`"true"`), numbers that may be strings. Each failed read is a ``TokenRejection``.
struct ClaimSet: Sendable {
    let values: [String: JSONValue]
    /// Prefix for messages ("events." for the notification's event object).
    var path = ""

    init(_ values: [String: JSONValue], path: String = "") {
        self.values = values
        self.path = path
    }

    func has(_ name: String) -> Bool { values[name] != nil && values[name] != .null }

    func string(_ name: String) throws(TokenRejection) -> String {
        guard let value = try optionalString(name) else { throw TokenRejection(.missingClaim, "the token has no \(path)\(name) claim") }
        return value
    }

    func optionalString(_ name: String) throws(TokenRejection) -> String? {
        guard has(name) else { return nil }
        guard let value = values[name]?.stringValue else { throw TokenRejection(.invalidClaim, "\(path)\(name) is not a string") }
        return value
    }

    /// A NumericDate (seconds since the epoch), as a number or a numeric string.
    func seconds(_ name: String) throws(TokenRejection) -> Int64 {
        guard let value = try optionalSeconds(name) else { throw TokenRejection(.missingClaim, "the token has no \(path)\(name) claim") }
        return value
    }

    /// The NumericDates accepted: from 1970 to the end of 9999 (a time RFC 3339 can write), so
    /// that no arithmetic on one (a leeway, a conversion to microseconds) can overflow.
    static let secondsAllowed: ClosedRange<Int64> = 0...Timestamp.latest.seconds

    func optionalSeconds(_ name: String) throws(TokenRejection) -> Int64? {
        try optionalWholeNumber(name, in: ClaimSet.secondsAllowed, "a number of seconds from 1970 to 9999")
    }

    /// Apple's `event_time`: seconds, as Apple's page shows it, or milliseconds, as deliveries
    /// have carried it; a value beyond 10^11 (year 5138 in seconds) is milliseconds.
    func eventTime(_ name: String) throws(TokenRejection) -> Date {
        let range = ClaimSet.secondsAllowed.lowerBound...(Timestamp.latest.microseconds / 1000)
        guard let raw = try optionalWholeNumber(name, in: range, "a number of seconds or milliseconds from 1970 to 9999") else {
            throw TokenRejection(.missingClaim, "the token has no \(path)\(name) claim")
        }
        return raw > 100_000_000_000 ? Date(timeIntervalSince1970: Double(raw) / 1000) : Date(seconds: raw)
    }

    /// A whole number in `range`, as a number (a fraction dropped) or a numeric string.
    private func optionalWholeNumber(_ name: String, in range: ClosedRange<Int64>, _ expected: String) throws(TokenRejection) -> Int64? {
        guard has(name) else { return nil }
        var number: Int64?
        switch values[name] {
        case .int(let i)?: number = i
        case .double(let d)? where d.isFinite && d >= 0 && d < 1e15: number = Int64(d.rounded(.down))
        case .string(let s)?: number = Int64(s)
        default: break
        }
        guard let number, range.contains(number) else {
            throw TokenRejection(.invalidClaim, "\(path)\(name) is not \(expected)")
        }
        return number
    }

    /// A Boolean sent as `true`/`false`, as the strings `"true"`/`"false"`, or as 0/1.
    func optionalBool(_ name: String) throws(TokenRejection) -> Bool? {
        guard has(name) else { return nil }
        switch values[name] {
        case .bool(let b)?: return b
        case .int(let i)? where i == 0 || i == 1: return i == 1
        case .double(let d)? where d == 0 || d == 1: return d == 1
        case .string(let s)?:
            switch s.lowercased() {
            case "true": return true
            case "false": return false
            default: break
            }
        default: break
        }
        throw TokenRejection(.invalidClaim, "\(path)\(name) is neither true nor false")
    }

    /// A small integer (below a billion either way), as a number or a numeric string.
    func optionalInt(_ name: String) throws(TokenRejection) -> Int? {
        guard has(name) else { return nil }
        let allowed = -999_999_999...999_999_999
        switch values[name] {
        case .int(let i)? where allowed.contains(Int(i)): return Int(i)
        case .double(let d)? where d == d.rounded() && abs(d) < 1e9: return Int(d)
        case .string(let s)?: if let v = Int(s), allowed.contains(v) { return v }
        default: break
        }
        throw TokenRejection(.invalidClaim, "\(path)\(name) is not an integer below a billion")
    }

    /// `aud` as one string or an array of strings.
    func audiences() throws(TokenRejection) -> [String] {
        switch values["aud"] {
        case nil, .null?: throw TokenRejection(.missingClaim, "the token has no aud claim")
        case .string(let s)?: return [s]
        case .array(let items)?:
            let strings = items.compactMap(\.stringValue)
            guard strings.count == items.count, !strings.isEmpty else {
                throw TokenRejection(.invalidClaim, "aud is not a string or an array of strings")
            }
            return strings
        default: throw TokenRejection(.invalidClaim, "aud is not a string or an array of strings")
        }
    }
}
