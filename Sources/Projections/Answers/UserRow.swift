import Basics
import Ledger

/// One user as the answers about users show them: the projected state, and what an answer
/// works out from it at the time asked (before the deadline, days left, the address opened).
public struct UserRow: Sendable {
    /// The user's projected state.
    public var state: UserState
    /// Whether the user migrated before the window's deadline; nil without a window or migration.
    public var beforeDeadline: Bool?
    /// Days left in the transfer window at the time asked; nil without a window.
    public var daysLeft: Int?
    /// The user's email address, or why it is not shown.
    public var email: EmailValue

    public init(_ state: UserState, window: TransferWindow?, time: Timestamp, email: EmailValue = .none) {
        self.state = state
        self.beforeDeadline = window.flatMap { window in state.migratedAt.map { $0 < window.deadline } }
        self.daysLeft = window?.daysLeft(at: time)
        self.email = email
    }
}

/// A user's email address as an answer holds it: in clear, or one of the reasons it is not.
public enum EmailValue: Sendable, Equatable {
    /// Apple never reported one.
    case none
    /// The address, opened with the user's key.
    case clear(String)
    /// Sealed, and not opened: the answer was made without personal data.
    case sealed
    /// Sealed, in a copy made without the key store (`handover backup` without keys).
    case sealedWithoutKey
    /// The user was erased: the key is destroyed and the address gone for good.
    case erased

    /// The state of `user`'s address, opened with `sealer` (nil: not opened).
    public init(of user: UserState, sealer: Sealer?) throws {
        try self.init(of: user, sealer: sealer) { try sealer?.open($0) }
    }

    /// The state of `user`'s address, opened by `open` when it can be (with `sealer`'s keys).
    private init(of user: UserState, sealer: Sealer?, open: (SealedValue) throws -> String?) throws {
        // Erasure destroys the user's key, the only way a key store loses one, so an address
        // that no longer opens is erased, also as of a time before the erasure.
        if user.erasedAt != nil {
            self = .erased
            return
        }
        guard let sealed = user.email else {
            self = .none
            return
        }
        guard let sealer else {
            self = .sealed
            return
        }
        guard sealer.keyStore != nil else {
            self = .sealedWithoutKey
            return
        }
        self = try open(sealed).map(EmailValue.clear) ?? .erased
    }

    /// The keys that open the addresses of `rows`, read from `sealer`'s key store in one read.
    public static func keys(for rows: [UserRow], sealer: Sealer?) throws -> Sealer.KeyBatch? {
        try sealer?.keys(for: rows.lazy.compactMap { $0.state.erasedAt == nil ? $0.state.email : nil })
    }

    /// Opens the address of every row with `sealer`, with the `keys` read for them
    /// (``keys(for:sealer:)``): a key missing from them was destroyed.
    public static func open(_ rows: inout [UserRow], sealer: Sealer?, keys: Sealer.KeyBatch?) throws {
        for i in rows.indices {
            rows[i].email = try EmailValue(of: rows[i].state, sealer: sealer) { sealed in try keys.flatMap { try sealer?.open(sealed, with: $0) } }
        }
    }

    /// The address only where it is in clear: what exports and output files write.
    public var clearOnly: EmailValue {
        if case .clear = self { return self }
        return .none
    }

    /// The cell: the address, or `(sealed)`, `(sealed: no key)`, `(erased)`; null without one.
    public var cell: QueryTable.Cell {
        switch self {
        case .none: return .null
        case .clear(let address): return .text(address)
        case .sealed: return .text("(sealed)")
        case .sealedWithoutKey: return .text("(sealed: no key)")
        case .erased: return .text("(erased)")
        }
    }
}
