#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads typed fields out of one JSON object in place, naming the field in every error.
///
/// Opening an object checks its syntax and notes where each member's value lies; a value is
/// parsed only when it is asked for, so reading a stored event builds no tree of values and
/// skips what its reader does not need. The bytes must outlive the reader (they are a
/// transaction's or an array's, lent for the duration of one decode).
struct FieldReader {
    /// One member: where its key's characters (inside the quotes) and its value lie.
    private struct Member {
        let key: Range<Int>
        let value: Range<Int>
    }

    private let bytes: UnsafeRawBufferPointer
    private let members: [Member]
    let context: String

    /// Opens the object that is the whole of `bytes`.
    init(document bytes: UnsafeRawBufferPointer, context: String) throws {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let start = parser.index
        do { try parser.skipValue(depth: 0) } catch { throw LedgerError(.malformedRecord, "\(context): \(error)") }
        let end = parser.index
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw LedgerError(.malformedRecord, "\(context): \(parser.error("trailing characters"))") }
        try self.init(bytes, object: start..<end, context: context)
    }

    /// Opens the object at `range` of `bytes`, whose syntax has been checked.
    private init(_ bytes: UnsafeRawBufferPointer, object range: Range<Int>, context: String) throws {
        self.bytes = bytes
        self.context = context
        guard range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "{") else { throw LedgerError(.malformedRecord, "\(context): expected an object") }
        var parser = JSONParser(bytes: bytes)
        parser.index = range.lowerBound + 1
        var members: [Member] = []
        members.reserveCapacity(10)
        parser.skipWhitespace()
        if bytes[parser.index] != UInt8(ascii: "}") {
            while true {
                parser.skipWhitespace()
                let keyStart = parser.index + 1
                do { try parser.skipString() } catch { throw LedgerError(.malformedRecord, "\(context): \(error)") }
                let key = keyStart..<(parser.index - 1)
                parser.skipWhitespace()
                parser.index += 1  // ':'
                parser.skipWhitespace()
                let valueStart = parser.index
                do { try parser.skipValue(depth: 1) } catch { throw LedgerError(.malformedRecord, "\(context): \(error)") }
                let member = Member(key: key, value: valueStart..<parser.index)
                if members.contains(where: { bytes[$0.key].elementsEqual(bytes[key]) }) {
                    throw LedgerError(.malformedRecord, "\(context): duplicate key \"\(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[key]), as: UTF8.self))\"")
                }
                members.append(member)
                parser.skipWhitespace()
                if bytes[parser.index] == UInt8(ascii: ",") { parser.index += 1; continue }
                break
            }
        }
        self.members = members
    }

    /// The value bytes of member `key`, or nil when the object has no such member.
    private func value(_ key: StaticString) -> Range<Int>? {
        let count = key.utf8CodeUnitCount
        for member in members where member.key.count == count {
            if memcmp(bytes.baseAddress! + member.key.lowerBound, key.utf8Start, count) == 0 { return member.value }
        }
        return nil
    }

    private func fail(_ key: StaticString, _ expected: String) -> LedgerError {
        LedgerError(.malformedRecord, "\(context).\(key): expected \(expected)")
    }

    private func parsed(_ range: Range<Int>) throws -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.index = range.lowerBound
        do { return try parser.parseValue(depth: 1) } catch { throw LedgerError(.malformedRecord, "\(context): \(error)") }
    }

    private func stringValue(_ range: Range<Int>) -> String? {
        guard bytes[range.lowerBound] == UInt8(ascii: "\"") else { return nil }
        var parser = JSONParser(bytes: bytes)
        parser.index = range.lowerBound
        return try? parser.parseString()
    }

    private func intValue(_ range: Range<Int>) -> Int? {
        var value = 0
        var i = range.lowerBound
        let negative = bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        guard i < range.upperBound, range.upperBound - i <= 18 else { return try? parsed(range).intValue.map { Int($0) } }
        while i < range.upperBound {
            let c = bytes[i]
            guard c >= 48 && c <= 57 else { return nil }
            value = value * 10 + Int(c - 48)
            i += 1
        }
        return negative ? -value : value
    }

    /// Whether the object has member `key`.
    func has(_ key: StaticString) -> Bool { value(key) != nil }

    func string(_ key: StaticString) throws -> String {
        guard let range = value(key), let s = stringValue(range) else { throw fail(key, "a string") }
        return s
    }
    func optionalString(_ key: StaticString) throws -> String? {
        guard let range = value(key) else { return nil }
        guard let s = stringValue(range) else { throw fail(key, "a string") }
        return s
    }
    func int(_ key: StaticString) throws -> Int {
        guard let range = value(key), let i = intValue(range) else { throw fail(key, "an integer") }
        return i
    }
    func optionalInt(_ key: StaticString) throws -> Int? {
        guard let range = value(key) else { return nil }
        guard let i = intValue(range) else { throw fail(key, "an integer") }
        return i
    }
    func optionalBool(_ key: StaticString) throws -> Bool? {
        guard let range = value(key) else { return nil }
        switch bytes[range.lowerBound] {
        case UInt8(ascii: "t"): return true
        case UInt8(ascii: "f"): return false
        default: throw fail(key, "a Boolean")
        }
    }
    func timestamp(_ key: StaticString) throws -> Timestamp {
        guard let t = try optionalTimestamp(key) else { throw fail(key, "an RFC 3339 time") }
        return t
    }
    func optionalTimestamp(_ key: StaticString) throws -> Timestamp? {
        guard let range = value(key) else { return nil }
        // The ledger's own form (27 bytes, no escapes) is read in place.
        if range.count == 29, bytes[range.lowerBound] == UInt8(ascii: "\""),
           let t = Timestamp(rfc3339UTF8: UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound + 1)..<(range.upperBound - 1)])) {
            return t
        }
        guard let s = stringValue(range), let t = Timestamp(rfc3339: s) else { throw fail(key, "an RFC 3339 time") }
        return t
    }
    func object(_ key: StaticString) throws -> FieldReader {
        guard let range = value(key) else { throw fail(key, "an object") }
        return try FieldReader(bytes, object: range, context: "\(context).\(key)")
    }
    func optionalObject(_ key: StaticString) throws -> FieldReader? {
        guard let range = value(key) else { return nil }
        return try FieldReader(bytes, object: range, context: "\(context).\(key)")
    }
    func stringArray(_ key: StaticString) throws -> [String] {
        guard let range = value(key), let items = try parsed(range).arrayValue else { throw fail(key, "an array of strings") }
        return try items.map { item in
            guard let s = item.stringValue else { throw fail(key, "an array of strings") }
            return s
        }
    }
    /// An object of integers (`counts`).
    func intMap(_ key: StaticString) throws -> [String: Int] {
        guard let range = value(key), let object = try parsed(range).objectValue else { throw fail(key, "an object of integers") }
        return try object.mapValues { v in
            guard let i = v.intValue else { throw fail(key, "an object of integers") }
            return Int(i)
        }
    }
    func enumeration<E: RawRepresentable>(_ key: StaticString, _ type: E.Type) throws -> E where E.RawValue == String {
        guard let e = E(rawValue: try string(key)) else { throw fail(key, "one of the known values") }
        return e
    }
}
