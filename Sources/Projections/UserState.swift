import Basics
import Ledger

/// Where a user stands in the migration, as far as this ledger knows.
public enum UserStatus: UInt8, Sendable, CaseIterable, Comparable {
    /// Seen only through Apple's sign-ins or notifications, never through the migration.
    case unmatched = 0
    /// Known, no attempt yet.
    case pending = 1
    /// The last attempt failed.
    case failed = 2
    /// Team A: a transfer identifier was generated for the target team.
    case transferIDGenerated = 3
    /// Team B: the user has a recipient `sub` (by exchange or sign-in).
    case migrated = 4
    /// Team B: handed over in a received package or list, not attempted yet.
    case received = 5

    /// The name used in output and exports.
    public var name: String {
        switch self {
        case .unmatched: return "unmatched"
        case .pending: return "pending"
        case .failed: return "failed"
        case .transferIDGenerated: return "transfer-id-generated"
        case .migrated: return "migrated"
        case .received: return "received"
        }
    }

    /// The order of progress, for merging two records of one user (the stored byte is not it:
    /// `received` came later): unmatched, pending, received, failed, generated, migrated.
    private var rank: Int {
        switch self {
        case .unmatched: return 0
        case .pending: return 1
        case .received: return 2
        case .failed: return 3
        case .transferIDGenerated: return 4
        case .migrated: return 5
        }
    }

    /// Whether this ledger's half of the migration is done for the user.
    public var isDone: Bool { self == .transferIDGenerated || self == .migrated }

    public static func < (a: UserStatus, b: UserStatus) -> Bool { a.rank < b.rank }
}

/// How a user's migration step was completed.
public enum MigrationPath: UInt8, Sendable, CaseIterable {
    /// Team A called `/auth/usermigrationinfo` with `sub` and `target`.
    case transferIDGeneration = 1
    /// Team B exchanged the `transfer_sub`.
    case exchange = 2
    /// The user signed in with a `transfer_sub` claim during the window.
    case signIn = 3

    /// The name used in output and exports.
    public var name: String {
        switch self {
        case .transferIDGeneration: return "transfer-id-generation"
        case .exchange: return "exchange"
        case .signIn: return "sign-in"
        }
    }
}

/// One user's current migration state, folded from every event that names them.
public struct UserState: Hashable, Sendable {
    /// The projection's own key for the user, assigned in fold order.
    public var key: UInt64
    /// The names the user is known by: account ID and each `sub` (never a `jti`).
    public var ids = Identifiers()
    public var accountID: String? {
        get { ids.accountID }
        set { ids.accountID = newValue }
    }
    public var senderSub: String? {
        get { ids.senderSub }
        set { ids.senderSub = newValue }
    }
    public var transferSub: String? {
        get { ids.transferSub }
        set { ids.transferSub = newValue }
    }
    public var recipientSub: String? {
        get { ids.recipientSub }
        set { ids.recipientSub = newValue }
    }
    public var targetTeam: String?
    /// Team B: the number of the handoff package that handed the user over (nil for a bare
    /// CSV's rows, or a user never handed over).
    public var package: Int?
    public var status: UserStatus
    /// When the migration happened: the event's occurred time (a token's `iat`) or, without
    /// one, its recorded time.
    public var migratedAt: Timestamp?
    /// When the ledger recorded the event that migrated the user.
    public var migratedRecordedAt: Timestamp?
    public var migratedVia: MigrationPath?
    /// The latest email Apple reported, sealed.
    public var email: SealedValue?
    /// When the ledger last recorded an address for the user (an exchange, a sign-in or a
    /// notification that carried one): `apply --since-last` takes the user's email again from then.
    public var emailChangedAt: Timestamp?
    public var isPrivateEmail: Bool?
    /// Whether Apple forwards email to the relay address (from email-enabled/disabled).
    public var emailForwarding: Bool?
    /// When the ledger recorded the last of those notifications.
    public var emailForwardingChangedAt: Timestamp?
    public var consentRevokedAt: Timestamp?
    public var accountDeletedAt: Timestamp?
    public var erasedAt: Timestamp?
    /// Generation or exchange attempts recorded (successes and failures).
    public var attempts: Int
    public var lastAttemptAt: Timestamp?
    /// The class of the last failure; nil after a success.
    public var lastErrorClass: FailureClass?
    public var lastError: String?
    /// Notifications received about the user.
    public var notifications: Int
    /// Team B: what `apply` last did to each column of the user's account in the app's database
    /// (beside `status`, whose meaning it does not change), and when the ledger recorded it.
    public var applied = PerColumn<AppliedCell>()
    public var firstSequence: UInt64
    public var lastSequence: UInt64

    public init(key: UInt64, status: UserStatus, sequence: UInt64) {
        self.key = key
        self.status = status
        self.attempts = 0
        self.notifications = 0
        self.firstSequence = sequence
        self.lastSequence = sequence
    }

    /// The user's identifiers (account ID and each `sub`).
    public var identifiers: [Identifier] { ids.all }
}

/// What `apply` last did to one column of a user's account, and when the ledger recorded it.
public struct AppliedCell: Hashable, Sendable {
    public var outcome: ApplyOutcome
    public var at: Timestamp

    public init(_ outcome: ApplyOutcome, at: Timestamp) {
        self.outcome = outcome
        self.at = at
    }
}
