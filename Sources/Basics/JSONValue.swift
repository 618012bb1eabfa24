/// A parsed JSON value, as read back from the ledger or from a foreign document.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses one JSON document from UTF-8 bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("trailing characters") }
        return value
    }

    /// Parses one JSON document from UTF-8 bytes.
    public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        try bytes.withUnsafeBytes { try parse($0) }
    }

    /// The canonical encoding of this value: keys sorted by their UTF-8 bytes, no whitespace.
    public var canonicalBytes: [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }

    /// Writes this value in canonical form.
    public func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.raw(Array("null".utf8))
        case .bool(let b): writer.bool(b)
        case .int(let i): writer.int(i)
        case .double(let d): writer.raw(Array("\(d)".utf8))
        case .string(let s): writer.string(s)
        case .array(let items):
            writer.beginArray()
            for item in items { item.write(to: &writer) }
            writer.endArray()
        case .object(let fields):
            writer.beginObject()
            for key in fields.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                writer.dynamicKey(key)
                fields[key]!.write(to: &writer)
            }
            writer.endObject()
        }
    }

    /// The fields of an object, or nil.
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o } else { return nil } }
    /// The string, or nil.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The integer, or nil.
    public var intValue: Int64? { if case .int(let i) = self { return i } else { return nil } }
    /// The Boolean, or nil.
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    /// The items of an array, or nil.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }

    /// The member `key` of an object, or nil.
    public subscript(key: String) -> JSONValue? { objectValue?[key] }
}

/// Why a document is not valid JSON, with the byte offset where reading stopped.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    /// What was wrong.
    public let reason: String
    /// The byte offset in the document.
    public let offset: Int
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

/// The JSON reader under ``JSONValue/parse(_:)-([UInt8])``, for the ledger's readers of its
/// own records, which skip what they do not need.
package struct JSONParser {
    package let bytes: UnsafeRawBufferPointer
    package var index = 0

    package init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    package func error(_ reason: String) -> JSONParseError { JSONParseError(reason: reason, offset: index) }

    package mutating func skipWhitespace() {
        while index < bytes.count {
            let c = bytes[index]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            index += 1
        }
    }

    package mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < 64 else { throw error("nested too deeply") }
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var fields: [String: JSONValue] = [:]
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(fields)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key") }
                let key = try parseString()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
                index += 1
                guard fields[key] == nil else { throw error("duplicate key \"\(key)\"") }
                fields[key] = try parseValue(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(fields)
                }
                throw error("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            index += 1
            var items: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                items.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                }
                throw error("expected ',' or ']'")
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            return try parseNumber()
        }
    }

    /// Moves past one value, checking its syntax as ``parseValue(depth:)`` does, building nothing.
    package mutating func skipValue(depth: Int) throws(JSONParseError) {
        guard depth < 64 else { throw error("nested too deeply") }
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let isObject = bytes[index] == UInt8(ascii: "{")
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == close {
                index += 1
                return
            }
            while true {
                if isObject {
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key") }
                    try skipString()
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
                    index += 1
                }
                try skipValue(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == close {
                    index += 1
                    return
                }
                throw error(isObject ? "expected ',' or '}'" : "expected ',' or ']'")
            }
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default:
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            var digits = 0
            while index < bytes.count {
                let c = bytes[index]
                if c >= 48 && c <= 57 {
                    digits += 1
                    index += 1
                    continue
                }
                if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
                    index += 1
                    continue
                }
                break
            }
            guard digits > 0 else {
                index = start
                throw error("unexpected character")
            }
        }
    }

    /// Moves past one string (the index on its opening quote), checking escapes.
    package mutating func skipString() throws(JSONParseError) {
        index += 1
        while index < bytes.count {
            // Eight bytes at a time while none is a quote, a backslash or a control character.
            while index + 8 <= bytes.count {
                let w = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let quote = w ^ 0x2222_2222_2222_2222
                let backslash = w ^ 0x5C5C_5C5C_5C5C_5C5C
                let high: UInt64 = 0x8080_8080_8080_8080
                let ones: UInt64 = 0x0101_0101_0101_0101
                let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((w &- 0x2020_2020_2020_2020) & ~w)
                if special & high != 0 { break }
                index += 8
            }
            guard index < bytes.count else { break }
            let c = bytes[index]
            if c == UInt8(ascii: "\"") {
                index += 1
                return
            }
            if c < 0x20 { throw error("control character in string") }
            if c == UInt8(ascii: "\\") {
                index += 1
                guard index < bytes.count else { break }
                switch bytes[index] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                    UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 1
                case UInt8(ascii: "u"):
                    index += 1
                    _ = try hex4()
                default: throw error("bad escape")
                }
                continue
            }
            index += 1
        }
        throw error("unterminated string")
    }

    mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end") }
        for i in 0..<count where bytes[index + i] != word.utf8Start[i] { throw error("unexpected character") }
        index += count
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        var isInteger = true
        let digitsStart = index
        while index < bytes.count {
            let c = bytes[index]
            if c >= 48 && c <= 57 {
                index += 1
                continue
            }
            if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
                isInteger = false
                index += 1
                continue
            }
            break
        }
        guard index > digitsStart else { throw error("unexpected character") }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text) else { throw error("bad number") }
        return .double(value)
    }

    package mutating func parseString() throws(JSONParseError) -> String {
        index += 1
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let c = bytes[index]
            if c == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return s
            }
            if c == UInt8(ascii: "\\") { break }
            if c < 0x20 { throw error("control character in string") }
            index += 1
        }
        var out = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let c = bytes[index]
            if c == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: out, as: UTF8.self)
            }
            if c < 0x20 { throw error("control character in string") }
            if c != UInt8(ascii: "\\") {
                out.append(c)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { break }
            let e = bytes[index]
            index += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw error("lone surrogate")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("lone surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let u = Unicode.Scalar(scalar) else { throw error("bad \\u escape") }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default: throw error("bad escape")
            }
        }
        throw error("unterminated string")
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("bad \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            index += 1
            switch c {
            case 48...57: v = v << 4 | UInt32(c - 48)
            case 65...70: v = v << 4 | UInt32(c - 55)
            case 97...102: v = v << 4 | UInt32(c - 87)
            default: throw error("bad \\u escape")
            }
        }
        return v
    }
}
