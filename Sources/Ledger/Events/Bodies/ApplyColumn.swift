import Basics

/// A value `apply` sets on an account: one the ledger holds for the user, mapped by the operator
/// to a column of the app's accounts table (`--set NAME=COLUMN`). An apply batch plans and
/// settles each mapped value of each account apart (its cell), so that the app's own change to
/// one column never blocks another.
public enum ApplyColumn: String, CaseIterable, Sendable, Hashable, Comparable {
    /// The user's `sub` under team B.
    case recipientSub = "recipient_sub"
    /// The private relay address team B's exchange or sign-in gave (`is_private_email` true): set
    /// only over a relay address or NULL, never over an address of the user's own.
    case email
    /// Whether Apple forwards mail to that address (`email-enabled`, `email-disabled`).
    case emailForwarding = "email_forwarding"

    /// The order of the cases: a batch's cells, its changes and a marker's letters follow it.
    public static func < (a: ApplyColumn, b: ApplyColumn) -> Bool { a.order < b.order }

    private var order: Int {
        switch self {
        case .recipientSub: 0
        case .email: 1
        case .emailForwarding: 2
        }
    }

    /// Whether the column's values are personal data, sealed in the ledger with the user's data key.
    public var isSealed: Bool { self == .email }

    /// Whether another account holding the new value is a collision (the value names one person).
    public var isUnique: Bool { self != .emailForwarding }

    /// The suffix of Apple's private relay addresses, matched without regard to case.
    public static let relayDomain = "@privaterelay.appleid.com"

    /// Whether `address` is one of Apple's private relay addresses.
    public static func isRelayAddress(_ address: String) -> Bool {
        address.utf8.count > relayDomain.utf8.count && address.lowercased().hasSuffix(relayDomain)
    }
}

/// One optional value for each ``ApplyColumn``: what a user's record keeps of each column, kept
/// in three stored properties rather than a dictionary (a fold makes one per event).
public struct PerColumn<Value: Hashable & Sendable>: Hashable, Sendable {
    public var recipientSub: Value?
    public var email: Value?
    public var emailForwarding: Value?

    public init(recipientSub: Value? = nil, email: Value? = nil, emailForwarding: Value? = nil) {
        self.recipientSub = recipientSub
        self.email = email
        self.emailForwarding = emailForwarding
    }

    public subscript(column: ApplyColumn) -> Value? {
        get {
            switch column {
            case .recipientSub: recipientSub
            case .email: email
            case .emailForwarding: emailForwarding
            }
        }
        set {
            switch column {
            case .recipientSub: recipientSub = newValue
            case .email: email = newValue
            case .emailForwarding: emailForwarding = newValue
            }
        }
    }

    /// Whether no column has a value.
    public var isEmpty: Bool { recipientSub == nil && email == nil && emailForwarding == nil }
}

/// A value an apply batch records for one cell: as the app's database shows it (text), or, for a
/// column of personal data (``ApplyColumn/isSealed``), sealed with the user's data key.
public enum ApplyValue: Hashable, Sendable {
    case text(String)
    case sealed(SealedValue)

    /// The text, nil for a sealed value.
    public var text: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    /// The value a row line's member holds, of the form `column` records (nil: JSON null, for SQL
    /// NULL); `.none` when it is not one.
    static func reading(_ value: JSONValue, for column: ApplyColumn) -> ApplyValue?? {
        switch value {
        case .null: return .some(nil)
        case .string(let text) where !column.isSealed: return .some(.text(text))
        case .object(let members) where column.isSealed:
            guard members.count == 3, members["alg"]?.stringValue == SealedValue.algorithm, let ct = members["ct"]?.stringValue,
                let kid = members["kid"]?.stringValue, kid.utf8.count == 32, Hex.decode(kid) != nil, kid == kid.lowercased()
            else { return nil }
            return .some(.sealed(SealedValue(keyID: kid, combined: ct)))
        default: return nil
        }
    }
}

/// One account's cell of an apply batch as planned: the column, the value the plan read and the
/// value it is to take (nil: SQL NULL, or no account), what the plan found, and for a collision
/// the keys of the accounts holding the new value. A kept cell (an address of the user's own)
/// records neither value.
public struct ApplyCell: Hashable, Sendable {
    public var column: ApplyColumn
    public var old: ApplyValue?
    public var new: ApplyValue?
    public var planned: ApplyPlanned
    /// For a collision, the keys of the accounts holding the new value; empty otherwise.
    public var holders: [String]

    public init(column: ApplyColumn, old: ApplyValue?, new: ApplyValue?, planned: ApplyPlanned, holders: [String] = []) {
        self.column = column
        (self.old, self.new) = planned == .kept ? (nil, nil) : (old, new)
        self.planned = planned
        self.holders = planned == .collision ? holders : []
    }
}

/// One account's outcome in one column of a settled apply batch.
public struct ApplyCellOutcome: Hashable, Sendable {
    public var column: ApplyColumn
    public var outcome: ApplyOutcome

    public init(_ column: ApplyColumn, _ outcome: ApplyOutcome) {
        self.column = column
        self.outcome = outcome
    }
}
