import Foundation

/// Typed, lenient reads of a JWT's claims, as Apple sends them: Booleans that may be
/// strings (`"true"`), numbers that may be strings. Each failed read is a ``TokenRejection``.
struct ClaimSet: Sendable {
    let values: [String: any Sendable]
    /// Prefix for messages ("events." for the notification's event object).
    var path = ""

    init(_ values: [String: any Sendable], path: String = "") {
        self.values = values
        self.path = path
    }

    func has(_ name: String) -> Bool { values[name] != nil && !(values[name] is NSNull) }

    func string(_ name: String) throws(TokenRejection) -> String {
        guard let value = try optionalString(name) else { throw TokenRejection(.missingClaim, "the token has no \(path)\(name) claim") }
        return value
    }

    func optionalString(_ name: String) throws(TokenRejection) -> String? {
        guard has(name) else { return nil }
        guard let value = values[name] as? String else { throw TokenRejection(.invalidClaim, "\(path)\(name) is not a string") }
        return value
    }

    /// A NumericDate (seconds since the epoch), as a number or a numeric string.
    func seconds(_ name: String) throws(TokenRejection) -> Int64 {
        guard let value = try optionalSeconds(name) else { throw TokenRejection(.missingClaim, "the token has no \(path)\(name) claim") }
        return value
    }

    func optionalSeconds(_ name: String) throws(TokenRejection) -> Int64? {
        guard has(name) else { return nil }
        switch values[name] {
        case let n as NSNumber where !ClaimSet.isBoolean(n) && n.doubleValue.isFinite && abs(n.doubleValue) < 1e15:
            return Int64(n.doubleValue.rounded(.down))
        case let s as String:
            if let v = Int64(s) { return v }
        default:
            break
        }
        throw TokenRejection(.invalidClaim, "\(path)\(name) is not a number of seconds")
    }

    /// A Boolean sent as `true`/`false` or as the strings `"true"`/`"false"`.
    func optionalBool(_ name: String) throws(TokenRejection) -> Bool? {
        guard has(name) else { return nil }
        switch values[name] {
        case let n as NSNumber where ClaimSet.isBoolean(n) || n.int64Value == 0 || n.int64Value == 1:
            return n.boolValue
        case let s as String:
            switch s.lowercased() {
            case "true": return true
            case "false": return false
            default: break
            }
        default:
            break
        }
        throw TokenRejection(.invalidClaim, "\(path)\(name) is neither true nor false")
    }

    func optionalInt(_ name: String) throws(TokenRejection) -> Int? {
        guard has(name) else { return nil }
        switch values[name] {
        case let n as NSNumber where !ClaimSet.isBoolean(n) && n.doubleValue == n.doubleValue.rounded() && abs(n.doubleValue) < 1e9:
            return n.intValue
        case let s as String:
            if let v = Int(s) { return v }
        default:
            break
        }
        throw TokenRejection(.invalidClaim, "\(path)\(name) is not an integer")
    }

    /// `aud` as one string or an array of strings.
    func audiences() throws(TokenRejection) -> [String] {
        switch values["aud"] {
        case nil, is NSNull: throw TokenRejection(.missingClaim, "the token has no aud claim")
        case let s as String: return [s]
        case let a as [any Sendable]:
            let strings = a.compactMap { $0 as? String }
            guard strings.count == a.count, !strings.isEmpty else { throw TokenRejection(.invalidClaim, "aud is not a string or an array of strings") }
            return strings
        default: throw TokenRejection(.invalidClaim, "aud is not a string or an array of strings")
        }
    }

    private static func isBoolean(_ n: NSNumber) -> Bool {
        // JSONSerialization reads true and false as Booleans whose objCType is "c".
        String(cString: n.objCType) == "c"
    }
}
