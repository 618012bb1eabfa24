import LogEngine

/// The team whose ledger a piece of work belongs on.
///
/// Given to ``Ledger/open(at:folders:options:)`` (``Ledger/Options/role``), it refuses the
/// other team's ledger before the open upgrades, catches up or writes anything: the refusal
/// reads the ledger's "ledger created" event and nothing else.
public struct RoleRequirement: Sendable, Equatable {
    /// The role the ledger must have.
    public let role: LedgerCreated.Role
    /// The work, as the refusal names it after the ledger: "sign-ins are recorded by the
    /// recipient team's `handover serve`".
    public let work: String

    public init(_ role: LedgerCreated.Role, work: String) {
        self.role = role
        self.work = work
    }

    /// A command of one team: "`handover apply` is run by the recipient team, on its own ledger".
    public static func command(_ name: String, of role: LedgerCreated.Role) -> RoleRequirement {
        RoleRequirement(role, work: "`handover \(name)` is run by the \(role.rawValue) team, on its own ledger")
    }

    /// The refusal of the ledger at `directory` whose "ledger created" is `identity`, or nil
    /// when it has the role.
    public func refusal(of identity: LedgerCreated, at directory: String) -> LedgerError? {
        guard identity.role != role else { return nil }
        return LedgerError(.wrongRole, RoleRequirement.describe(identity, at: directory) + "; " + work)
    }

    /// "ledger-a is team AAAA111111's sender ledger".
    public static func describe(_ identity: LedgerCreated, at directory: String) -> String {
        "\(directory) is team \(identity.teamID)'s \(identity.role.rawValue) ledger"
    }
}
