import AppleID
import ExitStatuses
import Ledger
import Projections

/// A run refused before its first call to Apple, with what to do instead: bad usage (exit 2).
public struct RunRefused: Error, Sendable, CustomStringConvertible, ExitStatusDeciding {
    public let description: String
    public init(_ description: String) { self.description = description }

    public var exitStatus: ExitStatus { .usage }
    public var exitMessage: String? { "refused before calling Apple: " + description }
}

/// The checks made before a run calls Apple: the right ledger for these credentials, never
/// the sender's own team as target, and a transfer window that is still open. (The ledger's
/// role is checked when it is opened: ``MigrationJob`` opens it with its run's role.)
public struct RunGuards: Sendable {
    public let identity: LedgerCreated
    public let window: TransferWindow?

    public init(identity: LedgerCreated, window: TransferWindow?) {
        self.identity = identity
        self.window = window
    }

    /// Throws ``RunRefused`` when the run must not start. `force` overrides only the closed window.
    public func check(step: any MigrationStep, teamID: String, clientID: String, now: Timestamp, force: Bool) throws {
        guard teamID == identity.teamID else {
            throw RunRefused(
                "the credentials are team \(teamID)'s but this ledger is team \(identity.teamID)'s; use that team's key, or that team's ledger")
        }
        guard identity.clientIDs.contains(clientID) else {
            throw RunRefused("client ID \(clientID) is not one of this ledger's (\(identity.clientIDs.joined(separator: ", ")))")
        }
        if let target = step.targetTeam {
            guard AppleCredentials.isTenCharacterID(target) else {
                throw RunRefused("target \"\(target)\" is not a team ID (10 characters of A-Z and 0-9)")
            }
            guard target != identity.teamID else {
                throw RunRefused(
                    "target \(target) is this ledger's own team: transfer identifiers must be generated for the recipient team's ID, never your own")
            }
        }
        if let window, now >= window.deadline, !force {
            throw RunRefused(
                """
                the transfer window closed on \(window.deadline) (\(window.windowDays) days after the transfer was accepted on \(window.acceptedAt)); \
                Apple no longer answers migration calls for this app. TN3159's way out: the recipient transfers the app back to the sending team, \
                the sending team generates transfer identifiers again and transfers the app forward, then the recipient exchanges within the new 60 days \
                (record the new date with `handover window --accepted-at DATE --correct`). Pass --force to call Apple anyway.
                """)
        }
    }
}
