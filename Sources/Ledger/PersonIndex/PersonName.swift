import LogEngine

/// A name the person index keeps a history for: an identifier of a person as events and rows
/// write it (`account_id`, `sender_sub`, `transfer_sub`, `recipient_sub`), or a handoff
/// package by its manifest's SHA-256 (`handoff_manifest`), which names the package's
/// events on both sides (schemas/audit-evidence.md, "Person index").
public struct PersonName: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The kind, as the event JSON names it.
    public let kind: String
    /// The value, exactly as recorded.
    public let value: String

    public init(kind: String, value: String) {
        self.kind = kind
        self.value = value
    }

    /// The identifier's name in the index.
    public init(_ identifier: Identifier) { self.init(kind: identifier.kind.rawValue, value: identifier.value) }

    /// The kind naming a handoff package by its manifest's SHA-256.
    public static let packageKind = "handoff_manifest"

    /// The kinds the index keeps: the four that name a user, then the package's.
    public static let kinds = IdentifierKind.userKinds.map(\.rawValue) + [packageKind]

    /// The package whose manifest's SHA-256 is `digest`.
    public static func package(_ digest: String) -> PersonName { PersonName(kind: packageKind, value: digest) }

    /// `SHA-256("handover-person-label/v1" ‖ 0x0A ‖ kind ‖ 0x0A ‖ value)`: the name's one place
    /// in the index, which anyone holding the name computes alike.
    public var label: SHA256Hash {
        var bytes = Array("handover-person-label/v1\n".utf8)
        bytes += Array(kind.utf8)
        bytes.append(0x0A)
        bytes += Array(value.utf8)
        return bytes.withUnsafeBytes { SHA256Hash(hashing: UnsafeRawBufferPointer(start: nil, count: 0), $0) }
    }

    /// By kind, then value, each by its UTF-8 bytes (the order of `index.json`'s names).
    public static func < (a: PersonName, b: PersonName) -> Bool {
        a.kind == b.kind ? a.value.utf8.lexicographicallyPrecedes(b.value.utf8) : a.kind.utf8.lexicographicallyPrecedes(b.kind.utf8)
    }

    public var description: String { "\(kind)=\(value)" }
}
