import AppleID
import Basics
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

    /// Why credentials of `teamID` and `clientID` cannot be used with the ledger whose "ledger
    /// created" is `ledger`; nil when they can.
    public static func credentialsMismatch(teamID: String, clientID: String, ledger: LedgerCreated) -> String? {
        guard teamID == ledger.teamID else {
            return "the credentials are team \(teamID)'s but this ledger is team \(ledger.teamID)'s; use that team's key, or that team's ledger"
        }
        guard ledger.clientIDs.contains(clientID) else {
            return "client ID \(clientID) is not one of this ledger's (\(ledger.clientIDs.joined(separator: ", ")))"
        }
        return nil
    }

    /// Throws ``RunRefused`` when the run must not start. `force` overrides only the closed window.
    public func check(step: any MigrationStep, teamID: String, clientID: String, now: Timestamp, force: Bool) throws {
        if let mismatch = RunGuards.credentialsMismatch(teamID: teamID, clientID: clientID, ledger: identity) { throw RunRefused(mismatch) }
        if let target = step.targetTeam {
            guard AppleCredentials.isTenCharacterID(target) else {
                throw RunRefused("target \"\(target)\" is not a team ID (10 characters of A-Z and 0-9)")
            }
            guard target != identity.teamID else {
                throw RunRefused(
                    "target \(target) is this ledger's own team: transfer identifiers must be generated for the recipient team's ID, never your own")
            }
        }
        if let window, window.hasClosed(at: now), !force {
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
