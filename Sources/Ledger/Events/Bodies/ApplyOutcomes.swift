/// What `apply` planned for one cell of a user's account (one column) before writing anything.
public enum ApplyPlanned: String, CaseIterable, Sendable, Hashable {
    /// The account takes the new value.
    case change
    /// The account holds it already: nothing to write.
    case already
    /// No account has the user's key (or none the operator's condition lets change).
    case noAccount = "no-account"
    /// Another account holds the new value: not written.
    case collision
    /// The email column holds an address of the user's own (not a private relay address): never
    /// overwritten, and recorded without its value.
    case kept
}

/// What became of one cell of a user's account (one column) in an `apply` run: the user's state
/// beside "migrated".
public enum ApplyOutcome: String, CaseIterable, Sendable, Hashable {
    /// The account held the planned old value and took the new one.
    case applied
    /// The account held the new value already.
    case already
    /// No account has the user's key (or none the condition lets change).
    case noAccount = "no-account"
    /// Another account holds the new value: not written.
    case collision
    /// The account no longer held the planned old value when written: not overwritten.
    case changedMeanwhile = "changed-meanwhile"
    /// An undo run restored the value the account held before.
    case undone
    /// The email column held an address of the user's own: not overwritten.
    case kept

    /// The outcome of an entry planned `planned` and not written.
    public init?(unwritten planned: ApplyPlanned) {
        switch planned {
        case .change: return nil
        case .already: self = .already
        case .noAccount: self = .noAccount
        case .collision: self = .collision
        case .kept: self = .kept
        }
    }

    /// Whether the cell holds what the run set (or would have), so a later run need not plan it
    /// again until the value changes: applied, already or kept.
    public var isSettled: Bool { self == .applied || self == .already || self == .kept }

    /// The byte stored in a user record; 0 is "none".
    public var storedByte: UInt8 {
        switch self {
        case .applied: return 1
        case .already: return 2
        case .noAccount: return 3
        case .collision: return 4
        case .changedMeanwhile: return 5
        case .undone: return 6
        case .kept: return 7
        }
    }

    /// The outcome `storedByte` stands for.
    public init?(storedByte: UInt8) {
        guard let found = Self.allCases.first(where: { $0.storedByte == storedByte }) else { return nil }
        self = found
    }
}
