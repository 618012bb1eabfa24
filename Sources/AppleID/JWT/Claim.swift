/// One claim of a token as Apple sends it: absent (or `null`), readable as `Value`, or present
/// in a form `Value` cannot read. Reading a payload never fails on a claim, so that jwt-kit
/// hands every signed payload back and each claim is refused with its own name and reason.
enum Claim<Value: ClaimValue>: Sendable {
    case absent
    case present(Value)
    case unreadable

    init(_ value: Value?) { self = value.map(Claim.present) ?? .absent }

    /// Whether the token has no such claim (or `null`).
    var isAbsent: Bool { if case .absent = self { true } else { false } }

    /// The value; a ``TokenRejection`` naming `name` when it is absent or unreadable.
    func required(_ name: String) throws(TokenRejection) -> Value {
        guard let value = try optional(name) else { throw TokenRejection(.missingClaim, "the token has no \(name) claim") }
        return value
    }

    /// The value, or nil when absent; a ``TokenRejection`` naming `name` when unreadable.
    func optional(_ name: String) throws(TokenRejection) -> Value? {
        switch self {
        case .absent: return nil
        case .present(let value): return value
        case .unreadable: throw TokenRejection(.invalidClaim, "\(name) is not \(Value.expected)")
        }
    }
}

/// A type a claim is read as, leniently: Apple sends Booleans and numbers as strings too.
protocol ClaimValue: Codable, Sendable {
    /// What a readable value is, for a refusal ("a string").
    static var expected: String { get }
    /// The value a decoder holds, or nil when it holds none this type reads.
    init?(claim: any SingleValueDecodingContainer)
}

extension Claim: Codable {
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .absent
        } else {
            self = Value(claim: container).map(Claim.present) ?? .unreadable
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .present(let value): try container.encode(value)
        case .absent, .unreadable: try container.encodeNil()
        }
    }
}

extension KeyedDecodingContainer {
    /// A claim's member: absent when the payload has none (the members a synthesized
    /// `init(from:)` reads come here).
    func decode<Value>(_ type: Claim<Value>.Type, forKey key: Key) throws -> Claim<Value> {
        try decodeIfPresent(type, forKey: key) ?? .absent
    }
}

extension KeyedEncodingContainer {
    /// A claim's member, written only when it holds a value.
    mutating func encode<Value>(_ claim: Claim<Value>, forKey key: Key) throws {
        if case .present(let value) = claim { try encode(value, forKey: key) }
    }
}
