import AppleID
import ArgumentParser
import Basics
import Foundation
import Ledger
import LogEngine
import NotificationServer
import Projections

/// `handover init`: create a ledger for one team.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Create a ledger for one team (refuses to overwrite an existing one).", exits: CommandExits.noLedger)

    @OptionGroup var ledgerOptions: LedgerOptions

    @Option(name: .customLong("team-id"), help: "Your 10-character Apple team ID (default: $APPLE_TEAM_ID).")
    var teamID: String?

    @Option(name: .customLong("client-id"), help: "The app's client ID; repeat for Services IDs (default: $APPLE_CLIENT_ID).")
    var clientIDs: [String] = []

    @Option(help: "sender (team A, generates transfer IDs) or recipient (team B, exchanges them).")
    var role: LedgerCreated.Role

    @Option(name: .customLong("on-account-deleted"), help: "When Apple reports an account deleted: erase (destroy personal data) or keep.")
    var onAccountDeleted: LedgerCreated.DeletionPolicy = .erase

    @Option(
        name: .customLong("sign-in-secret-file"),
        help: ArgumentHelp("Bearer secret that `serve` requires for sign-in reports; only its SHA-256 is kept.", valueName: "file"))
    var signInSecretFile: String?

    func validate() throws {
        let env = ProcessInfo.processInfo.environment
        guard let team = teamID ?? env["APPLE_TEAM_ID"], !team.isEmpty else { throw ValidationError("--team-id is required (or set APPLE_TEAM_ID)") }
        guard AppleCredentials.isTenCharacterID(team) else {
            throw ValidationError("--team-id: \"\(team)\" is not a 10-character Apple team ID (upper-case letters and digits)")
        }
        guard !(clientIDs.isEmpty && (env["APPLE_CLIENT_ID"] ?? "").isEmpty) else {
            throw ValidationError("--client-id is required (or set APPLE_CLIENT_ID)")
        }
    }

    func run() async throws {
        let env = ProcessInfo.processInfo.environment
        let team = teamID ?? env["APPLE_TEAM_ID"]!
        let clients = clientIDs.isEmpty ? [env["APPLE_CLIENT_ID"]!] : clientIDs
        let secret: BearerSecret?
        secret = try signInSecretFile.map { try BearerSecret.load(file: $0, for: .signIn) }
        let created = LedgerCreated(
            teamID: team, clientIDs: clients, role: role, ledgerID: UUID().uuidString.lowercased(), onAccountDeleted: onAccountDeleted)
        let ledger = try await Ledger.create(at: ledgerOptions.directory, created, folders: [UserProjection()])
        let verifierKey = try ledger.verifierKey().line
        ledger.close()
        if let secret {
            let path = BearerSecret.digestFile(in: ledgerOptions.directory)
            guard FileManager.default.createFile(atPath: path, contents: Data((secret.digestHex + "\n").utf8), attributes: [.posixPermissions: 0o600])
            else {
                throw CLIExit(.failed, "created the ledger but could not write \(path); pass --sign-in-secret-file to serve instead")
            }
        }
        Console.out("Created \(role.rawValue) ledger \(created.ledgerID) for team \(team) in \(ledgerOptions.directory)")
        Console.out(
            "Checkpoints are signed with \(CheckpointKey.path(in: ledgerOptions.directory)); its verifier key, for auditors (also in \(VerifierKeyFile.path(in: ledgerOptions.directory))):\n  \(verifierKey)"
        )
        Console.out(nextSteps(ledger: ledgerOptions.directory).joined(separator: "\n"))
    }

    /// What the team does next with a new ledger at `ledger`: team A checks its set-up and
    /// generates; team B receives team A's package. Both record the transfer date once the
    /// transfer is accepted.
    func nextSteps(ledger: String) -> [String] {
        let window =
            "  - once the transfer is accepted, record its date: " + ShellWord.handover("window", ledger: ledger, "--accepted-at YYYY-MM-DD")
        switch role {
        case .sender:
            return [
                "Next (the words in capitals are yours to fill in):",
                "  - check the set-up: " + ShellWord.handover("preflight", ledger: ledger, "--users USERS.CSV"),
                "  - generate the transfer identifiers: "
                    + ShellWord.handover("generate", ledger: ledger, "--users USERS.CSV --target TEAM_ID --out HANDOFF.CSV"),
                window,
            ]
        case .recipient:
            return [
                "Next (the words in capitals are yours to fill in):",
                "  - the day team A's package arrives, receive it with their verifier key, pinned out of band: "
                    + ShellWord.handover("handoff receive PACKAGE", ledger: ledger, "--sender-key SENDER.PUB"),
                window,
            ]
        }
    }
}

extension LedgerCreated.Role: ExpressibleByArgument {}
extension LedgerCreated.DeletionPolicy: ExpressibleByArgument {}
