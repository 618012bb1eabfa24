import Basics

/// Body of "ledger created": whose ledger this is and how it behaves.
public struct LedgerCreated: Hashable, Sendable {
    /// Which side of the transfer a ledger belongs to.
    public enum Role: String, Sendable, CaseIterable {
        /// Team A, the sending team: generates transfer identifiers.
        case sender
        /// Team B, the recipient team: exchanges them and hears from Apple afterwards.
        case recipient

        /// The kind of the `sub` Apple's tokens carry for this team.
        public var subKind: IdentifierKind { self == .sender ? .senderSub : .recipientSub }
    }

    /// What to do with a user's personal data when Apple reports the account deleted.
    public enum DeletionPolicy: String, Sendable, CaseIterable {
        /// Destroy the user's data key (the default).
        case erase
        /// Keep the sealed data.
        case keep
    }

    /// The team's 10-character Apple team ID.
    public var teamID: String
    /// The app's client IDs (bundle ID and Services IDs).
    public var clientIDs: [String]
    public var role: Role
    /// A random ID naming this ledger in evidence and exports.
    public var ledgerID: String
    public var onAccountDeleted: DeletionPolicy
    /// Days Apple allows after the transfer (60).
    public var windowDays: Int

    public init(teamID: String, clientIDs: [String], role: Role, ledgerID: String, onAccountDeleted: DeletionPolicy = .erase, windowDays: Int = 60) {
        self.teamID = teamID
        self.clientIDs = clientIDs
        self.role = role
        self.ledgerID = ledgerID
        self.onAccountDeleted = onAccountDeleted
        self.windowDays = windowDays
    }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("client_ids", strings: clientIDs)
        w.field("ledger_id", ledgerID)
        w.field("role", role.rawValue)
        w.key("settings")
        w.beginObject()
        w.field("on_account_deleted", onAccountDeleted.rawValue)
        w.field("window_days", windowDays)
        w.endObject()
        w.field("team_id", teamID)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        let settings = try r.object("settings")
        self.init(
            teamID: try r.string("team_id"), clientIDs: try r.stringArray("client_ids"), role: try r.enumeration("role", Role.self),
            ledgerID: try r.string("ledger_id"), onAccountDeleted: try settings.enumeration("on_account_deleted", DeletionPolicy.self),
            windowDays: try settings.int("window_days", in: TransferAccepted.windowDaysAllowed))
    }
}
