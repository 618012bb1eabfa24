import LogEngine

#if canImport(Glibc)
import Basics
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where every object member of one JSON document lies, found in one pass that checks the
/// document's syntax: the index ``FieldReader`` reads fields through.
struct ObjectTape {
    /// One member: where its key's characters (inside the quotes) and its value lie.
    struct Member {
        let key: Range<Int>
        let value: Range<Int>
    }

    let bytes: UnsafeRawBufferPointer
    /// The members of every object, each object's together.
    private(set) var members: [Member] = []
    /// Each object's first byte and its members in ``members``, in the order the objects close.
    private var objects: [(start: Int, members: Range<Int>)] = []
    init(document bytes: UnsafeRawBufferPointer) throws(JSONParseError) {
        self.bytes = bytes
        members.reserveCapacity(24)
        objects.reserveCapacity(6)
        // Members of the objects still open, innermost last.
        var open: [Member] = []
        open.reserveCapacity(16)
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        try scan(&parser, depth: 0, open: &open)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("trailing characters") }
    }

    /// The members of the object starting at byte `start`, if one does.
    func members(ofObjectAt start: Int) -> Range<Int>? {
        objects.first { $0.start == start }?.members
    }

    private mutating func scan(_ parser: inout JSONParser, depth: Int, open: inout [Member]) throws(JSONParseError) {
        guard depth < 64 else { throw parser.error("nested too deeply") }
        guard parser.index < bytes.count else { throw parser.error("unexpected end") }
        switch bytes[parser.index] {
        case UInt8(ascii: "{"):
            let start = parser.index
            let height = open.count
            var keys = Set<[UInt8]>()
            parser.index += 1
            parser.skipWhitespace()
            if parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "}") {
                parser.index += 1
            } else {
                while true {
                    parser.skipWhitespace()
                    guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "\"") else { throw parser.error("expected a key") }
                    let keyStart = parser.index + 1
                    try parser.skipString()
                    let key = keyStart..<(parser.index - 1)
                    parser.skipWhitespace()
                    guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: ":") else { throw parser.error("expected ':'") }
                    parser.index += 1
                    parser.skipWhitespace()
                    let valueStart = parser.index
                    try scan(&parser, depth: depth + 1, open: &open)
                    // An event's few members are compared directly; an object of many (only
                    // outside input has one) is checked through a set, so the check stays linear.
                    let duplicate: Bool
                    if open.count - height < 16 {
                        duplicate = open[height...].contains {
                            $0.key.count == key.count
                                && memcmp(bytes.baseAddress! + $0.key.lowerBound, bytes.baseAddress! + key.lowerBound, key.count) == 0
                        }
                    } else {
                        if keys.isEmpty { keys = Set(open[height...].map { Array(UnsafeRawBufferPointer(rebasing: bytes[$0.key])) }) }
                        duplicate = !keys.insert(Array(UnsafeRawBufferPointer(rebasing: bytes[key]))).inserted
                    }
                    if duplicate {
                        throw parser.error("duplicate key \"\(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[key]), as: UTF8.self))\"")
                    }
                    open.append(Member(key: key, value: valueStart..<parser.index))
                    parser.skipWhitespace()
                    guard parser.index < bytes.count else { throw parser.error("unexpected end") }
                    if bytes[parser.index] == UInt8(ascii: ",") {
                        parser.index += 1
                        continue
                    }
                    if bytes[parser.index] == UInt8(ascii: "}") {
                        parser.index += 1
                        break
                    }
                    throw parser.error("expected ',' or '}'")
                }
            }
            let first = members.count
            members.append(contentsOf: open[height...])
            open.removeSubrange(height...)
            objects.append((start, first..<members.count))
        case UInt8(ascii: "["):
            parser.index += 1
            parser.skipWhitespace()
            if parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "]") {
                parser.index += 1
                return
            }
            while true {
                parser.skipWhitespace()
                try scan(&parser, depth: depth + 1, open: &open)
                parser.skipWhitespace()
                guard parser.index < bytes.count else { throw parser.error("unexpected end") }
                if bytes[parser.index] == UInt8(ascii: ",") {
                    parser.index += 1
                    continue
                }
                if bytes[parser.index] == UInt8(ascii: "]") {
                    parser.index += 1
                    return
                }
                throw parser.error("expected ',' or ']'")
            }
        default:
            try parser.skipValue(depth: depth)
        }
    }
}

/// Reads typed fields out of one JSON object in place, naming the field in every error.
///
/// The document is read once, into an ``ObjectTape``; a value is parsed only when it is asked
/// for, so reading a stored event builds no tree of values and skips what its reader does not
/// need. The bytes must outlive the reader (they are a transaction's or an array's, lent for
/// the duration of one decode).
struct FieldReader {
    private let tape: ObjectTape
    private let members: Range<Int>
    let context: String

    private var bytes: UnsafeRawBufferPointer { tape.bytes }

    /// Opens the object that is the whole of `bytes`.
    init(document bytes: UnsafeRawBufferPointer, context: String) throws {
        let tape: ObjectTape
        do { tape = try ObjectTape(document: bytes) } catch { throw LedgerError(.malformedRecord, context, underlying: error) }
        var start = 0
        while start < bytes.count, bytes[start] == 0x20 || bytes[start] == 0x0A || bytes[start] == 0x0D || bytes[start] == 0x09 { start += 1 }
        try self.init(tape, objectAt: start, context: context)
    }

    /// Opens the object starting at byte `start` of the tape's document.
    private init(_ tape: ObjectTape, objectAt start: Int, context: String) throws {
        guard let members = tape.members(ofObjectAt: start) else { throw LedgerError(.malformedRecord, "\(context): expected an object") }
        self.tape = tape
        self.members = members
        self.context = context
    }

    /// The value bytes of member `key`, or nil when the object has no such member.
    private func value(_ key: StaticString) -> Range<Int>? {
        let count = key.utf8CodeUnitCount
        for member in tape.members[members] where member.key.count == count {
            if memcmp(bytes.baseAddress! + member.key.lowerBound, key.utf8Start, count) == 0 { return member.value }
        }
        return nil
    }

    /// The error that the object (or its member `key`) is not what it must be: `problem` says how.
    func refuse(_ key: StaticString?, _ problem: String) -> LedgerError {
        LedgerError(.malformedRecord, "\(context)\(key.map { ".\($0)" } ?? ""): \(problem)")
    }

    private func parsed(_ range: Range<Int>) throws -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.index = range.lowerBound
        do { return try parser.parseValue(depth: 1) } catch { throw LedgerError(.malformedRecord, context, underlying: error) }
    }

    private func stringValue(_ range: Range<Int>) -> String? {
        guard bytes[range.lowerBound] == UInt8(ascii: "\"") else { return nil }
        var parser = JSONParser(bytes: bytes)
        parser.index = range.lowerBound
        // The caller asks whether the field is a string: one that is not well formed is not.
        return try? parser.parseString()
    }

    private func intValue(_ range: Range<Int>) -> Int? {
        var value = 0
        var i = range.lowerBound
        let negative = bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        // A long or unusual number goes through the full parser; one that is not an integer is not.
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
        guard let range = value(key), let s = stringValue(range) else { throw refuse(key, expected: "a string") }
        return s
    }
    func optionalString(_ key: StaticString) throws -> String? {
        guard let range = value(key) else { return nil }
        guard let s = stringValue(range) else { throw refuse(key, expected: "a string") }
        return s
    }
    func int(_ key: StaticString) throws -> Int {
        guard let range = value(key), let i = intValue(range) else { throw refuse(key, expected: "an integer") }
        return i
    }
    func optionalInt(_ key: StaticString) throws -> Int? {
        guard let range = value(key) else { return nil }
        guard let i = intValue(range) else { throw refuse(key, expected: "an integer") }
        return i
    }
    func optionalBool(_ key: StaticString) throws -> Bool? {
        guard let range = value(key) else { return nil }
        switch bytes[range.lowerBound] {
        case UInt8(ascii: "t"): return true
        case UInt8(ascii: "f"): return false
        default: throw refuse(key, expected: "a Boolean")
        }
    }
    /// An array, its items parsed.
    func array(_ key: StaticString) throws -> [JSONValue] {
        guard let range = value(key), let items = try parsed(range).arrayValue else { throw refuse(key, expected: "an array") }
        return items
    }
    func timestamp(_ key: StaticString) throws -> Timestamp {
        guard let t = try optionalTimestamp(key) else { throw refuse(key, expected: "an RFC 3339 time") }
        return t
    }
    func optionalTimestamp(_ key: StaticString) throws -> Timestamp? {
        guard let range = value(key) else { return nil }
        // The ledger's own form (27 bytes, no escapes) is read in place.
        if range.count == 29, bytes[range.lowerBound] == UInt8(ascii: "\""),
            let t = Timestamp(rfc3339UTF8: UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound + 1)..<(range.upperBound - 1)]))
        {
            return t
        }
        guard let s = stringValue(range), let t = Timestamp(rfc3339: s) else { throw refuse(key, expected: "an RFC 3339 time") }
        return t
    }
    func object(_ key: StaticString) throws -> FieldReader {
        guard let range = value(key) else { throw refuse(key, expected: "an object") }
        return try FieldReader(tape, objectAt: range.lowerBound, context: "\(context).\(key)")
    }
    func optionalObject(_ key: StaticString) throws -> FieldReader? {
        guard let range = value(key) else { return nil }
        return try FieldReader(tape, objectAt: range.lowerBound, context: "\(context).\(key)")
    }
    func stringArray(_ key: StaticString) throws -> [String] {
        guard let range = value(key), let items = try parsed(range).arrayValue else { throw refuse(key, expected: "an array of strings") }
        return try items.map { item in
            guard let s = item.stringValue else { throw refuse(key, expected: "an array of strings") }
            return s
        }
    }
    /// An array of integers of 0 or more.
    func countArray(_ key: StaticString) throws -> [Int] {
        guard let range = value(key), let items = try parsed(range).arrayValue else { throw refuse(key, expected: "an array of integers") }
        return try items.map { item in
            guard let i = item.intValue, i >= 0, i <= Int64(Int.max) else { throw refuse(key, expected: "an array of integers of 0 or more") }
            return Int(i)
        }
    }
    /// An object of counts (`counts`): integers from 0 to 2^32 − 1, so that summing a few
    /// cannot overflow.
    func intMap(_ key: StaticString) throws -> [String: Int] {
        guard let range = value(key), let object = try parsed(range).objectValue else { throw refuse(key, expected: "an object of counts") }
        return try object.mapValues { v in
            guard let i = v.intValue, (0...Int64(UInt32.max)).contains(i) else {
                throw refuse(key, expected: "an object of counts from 0 to 4294967295")
            }
            return Int(i)
        }
    }
}
