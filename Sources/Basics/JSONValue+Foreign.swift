import Foundation

extension JSONValue {
    /// Parses a document from outside (a JWS header or claims, a request body): like
    /// ``parse(_:)-([UInt8])``, and also refused when its bytes are not UTF-8, so that nothing
    /// a stranger sent is silently repaired. A duplicate member name is refused too (RFC 7515
    /// allows a JWS parser to refuse them, and refusing leaves no doubt which one was read).
    public static func parse(untrusted bytes: [UInt8]) throws -> JSONValue {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw JSONParseError(reason: "not UTF-8", offset: invalidUTF8Offset(bytes))
        }
        return try parse(bytes)
    }

    /// `bytes` from outside, parsed as ``parse(untrusted:)`` does, which must be a JSON object.
    public static func parseObject(untrusted bytes: [UInt8]) throws -> [String: JSONValue] {
        guard let object = try parse(untrusted: bytes).objectValue else {
            throw JSONParseError(reason: "the document is not an object", offset: 0)
        }
        return object
    }

    /// The offset of the first byte that breaks UTF-8.
    private static func invalidUTF8Offset(_ bytes: [UInt8]) -> Int {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput, .error: return offset
            }
        }
    }
}

extension JSONValue: Encodable {
    /// Encodes the value through any `Encoder` (a JSON object's members in the encoder's own
    /// order): for documents built from parts, such as a signed token's claims. The ledger's
    /// bytes are written by ``write(to:)``, never through this.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .int(let i): try container.encode(i)
        case .double(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let items): try container.encode(items)
        case .object(let fields): try container.encode(fields)
        }
    }
}

extension JSONEncoder {
    /// An encoder for the JSON Handover sends and prints: keys sorted, so the same value gives
    /// the same bytes, and `/` left unescaped.
    public static func sortedKeys() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
