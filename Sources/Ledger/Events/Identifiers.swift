import Basics

/// The kinds of identifier an event may touch; each is indexed.
public enum IdentifierKind: String, CaseIterable, Sendable, Hashable {
    /// The app's own account ID for the user (both teams' user tables).
    case accountID = "account_id"
    /// The sending team's (team A's) `sub`.
    case senderSub = "sender_sub"
    /// The `transfer_sub` that joins the two teams.
    case transferSub = "transfer_sub"
    /// The recipient team's (team B's) `sub`.
    case recipientSub = "recipient_sub"
    /// The `jti` of an Apple notification.
    case jti = "jti"

    /// The one-byte tag that starts this kind's index keys.
    public var tag: UInt8 {
        switch self {
        case .accountID: return UInt8(ascii: "a")
        case .senderSub: return UInt8(ascii: "s")
        case .transferSub: return UInt8(ascii: "t")
        case .recipientSub: return UInt8(ascii: "r")
        case .jti: return UInt8(ascii: "j")
        }
    }

    /// The kinds that name a user (all but `jti`).
    public static let userKinds: [IdentifierKind] = [.accountID, .senderSub, .transferSub, .recipientSub]
}

/// One identifier: its kind and value.
public struct Identifier: Hashable, Sendable, CustomStringConvertible {
    public let kind: IdentifierKind
    public let value: String

    public init(_ kind: IdentifierKind, _ value: String) {
        self.kind = kind
        self.value = value
    }

    /// Bytes naming this identifier in indexes: the kind's tag, then the value's UTF-8.
    public var indexKey: [UInt8] {
        var key: [UInt8] = [kind.tag]
        key.append(contentsOf: value.utf8)
        return key
    }

    public var description: String { "\(kind.rawValue)=\(value)" }
}

/// The identifiers one event touches, at most one of each kind.
public struct Identifiers: Hashable, Sendable {
    public var accountID: String?
    public var senderSub: String?
    public var transferSub: String?
    public var recipientSub: String?
    public var jti: String?

    public init(accountID: String? = nil, senderSub: String? = nil, transferSub: String? = nil, recipientSub: String? = nil, jti: String? = nil) {
        self.accountID = accountID
        self.senderSub = senderSub
        self.transferSub = transferSub
        self.recipientSub = recipientSub
        self.jti = jti
    }

    /// The value of `kind`, if present.
    public subscript(kind: IdentifierKind) -> String? {
        get {
            switch kind {
            case .accountID: return accountID
            case .senderSub: return senderSub
            case .transferSub: return transferSub
            case .recipientSub: return recipientSub
            case .jti: return jti
            }
        }
        set {
            switch kind {
            case .accountID: accountID = newValue
            case .senderSub: senderSub = newValue
            case .transferSub: transferSub = newValue
            case .recipientSub: recipientSub = newValue
            case .jti: jti = newValue
            }
        }
    }

    /// Every identifier present, in index-tag order.
    public var all: [Identifier] {
        IdentifierKind.allCases.compactMap { kind in self[kind].map { Identifier(kind, $0) } }
    }

    /// Whether no identifier is present.
    public var isEmpty: Bool { all.isEmpty }

    /// The longest identifier the ledger accepts, in UTF-8 bytes (LMDB keys stop at 511).
    public static let maximumLength = 400
}

extension Identifiers: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            accountID: try c.optional("account_id", v?.accountID), senderSub: try c.optional("sender_sub", v?.senderSub),
            transferSub: try c.optional("transfer_sub", v?.transferSub), recipientSub: try c.optional("recipient_sub", v?.recipientSub),
            jti: try c.optional("jti", v?.jti))
    }
}
