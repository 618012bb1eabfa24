import Basics
import Ledger

/// What team B's app backend is told about a user who signs in, or looks them up: which of the
/// app's accounts the user is (team A's `account_id`, from the package that handed them over),
/// and where their migration stands. Read from the projections; a lookup records nothing.
public struct UserLookup: Sendable, Equatable {
    /// Why a lookup could not name an account.
    public enum Miss: String, Sendable {
        /// Nothing is recorded under the identifier: for a `transfer_sub`, a user team A did
        /// not hand over (or a token for another app).
        case notHandedOver = "not-handed-over"
        /// The user came in a received package, but its row gave no `account_id`.
        case noAccountID = "no-account-id"
    }

    /// The identifier asked about.
    public var asked: Identifier
    /// The user it names, if any.
    public var user: UserState?

    /// Looks `identifier` up in `snapshot`.
    public init(_ identifier: Identifier, in snapshot: any ProjectionSnapshot) throws {
        asked = identifier
        user = try snapshot.user(with: identifier)
    }

    /// Whether the backend can link the sign-in to an existing account: the `account_id` is known.
    public var correlated: Bool { user?.accountID != nil }

    /// Why not, when not correlated.
    public var miss: Miss? {
        guard !correlated else { return nil }
        // A sign-in with a transfer_sub records the user by itself: only a package says they were handed over.
        return user?.package == nil ? .notHandedOver : .noAccountID
    }

    /// The miss in words, for people.
    public var missDetail: String? {
        switch miss {
        case .notHandedOver?:
            return asked.kind == .transferSub
                ? "this transfer_sub is in no package or list received: a user team A did not hand over, or a token for another app"
                : "nothing is recorded under this \(asked.kind.rawValue)"
        case .noAccountID?:
            return "the user came in package \(user?.package ?? 0), whose row gave no account_id"
        case nil:
            return nil
        }
    }

    /// The user's state name (`received`, `migrated`, ...); nil when unknown.
    public var state: String? { user?.status.name }

    /// The answer's members, as `serve` answers them and `handover lookup --format json`
    /// prints them: absent values left out.
    public var members: [(name: String, value: JSONValue)] {
        var members: [(String, JSONValue)] = [("correlated", .bool(correlated))]
        func add(_ name: String, _ value: String?) { if let value { members.append((name, .string(value))) } }
        if let user {
            add("account_id", user.accountID)
            if let package = user.package { members.append(("package", .int(Int64(package)))) }
            add("state", user.status.name)
            add("migrated_via", user.migratedVia?.name)
            add("migrated_at", user.migratedAt?.rfc3339)
            add("transfer_sub", user.transferSub)
            add("recipient_sub", user.recipientSub)
        }
        add("reason", miss?.rawValue)
        add("detail", missDetail)
        return members
    }
}
