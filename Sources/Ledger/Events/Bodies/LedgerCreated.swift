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
}

extension LedgerCreated: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        let (teamID, clientIDs) = (try c.field("team_id", v?.teamID), try c.field("client_ids", v?.clientIDs))
        let (role, ledgerID) = (try c.field("role", v?.role), try c.field("ledger_id", v?.ledgerID))
        let settings = try c.field("settings", v.map { Settings(onAccountDeleted: $0.onAccountDeleted, windowDays: $0.windowDays) })
        return Self(
            teamID: teamID, clientIDs: clientIDs, role: role, ledgerID: ledgerID, onAccountDeleted: settings.onAccountDeleted,
            windowDays: settings.windowDays)
    }

    /// The ledger's settings, one object in the body.
    private struct Settings: FieldObject {
        var onAccountDeleted: DeletionPolicy
        var windowDays: Int

        static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
            Self(
                onAccountDeleted: try c.field("on_account_deleted", v?.onAccountDeleted),
                windowDays: try c.field("window_days", v?.windowDays, in: TransferAccepted.windowDaysAllowed))
        }
    }
}

extension LedgerCreated.Role: FieldEnumeration {}
extension LedgerCreated.DeletionPolicy: FieldEnumeration {}
