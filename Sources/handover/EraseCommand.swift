import ArgumentParser
import Basics
import Ledger
import Projections

/// `handover erase`: destroy one user's personal data.
struct EraseCommand: AsyncParsableCommand, EitherTeamsCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase", abstract: "Destroy one user's personal data and record that it was done; the log still verifies.",
        discussion: "Exits 1 when the ledger holds no such user.", exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions
    @Argument(help: "An account ID, sender sub, transfer_sub or recipient sub.") var identifier: String
    @Option(help: "Why (recorded in the event).") var reason = "erasure request"

    func run() async throws {
        let (ledger, projection) = try ledgerOptions.open(.readWrite, for: self)
        defer { ledger.close() }
        guard let result = try await UserEraser(ledger: ledger, projection: projection).erase(identifier, reason: reason) else {
            throw CLIExit(.failed, "no user with identifier \"\(identifier)\"")
        }
        if result.alreadyErased {
            Console.out("User \(result.user.key) was already erased at \(result.user.erasedAt?.rfc3339 ?? "?"); nothing to do.")
        } else {
            Console.out(
                "Erased user \(result.user.key): \(counted(result.keysDestroyed, "data key")) destroyed, recorded as event \(result.sequence ?? 0).")
        }
    }
}
