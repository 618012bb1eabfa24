import ArgumentParser
import Demo
import Foundation

/// `handover demo`: a whole rehearsal, built in.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo", abstract: "Write a rehearsal of a whole transfer into fresh ledgers and answer the main questions.",
        exits: CommandExits.noLedger)

    @Option(help: "Users to migrate.") var users = 2_000
    @Option(help: ArgumentHelp("Directory for the demo ledgers (default: a new temporary directory).", valueName: "dir")) var directory: String?
    @Option(
        help: ArgumentHelp(
            """
            Seed of the Apple stand-in: it decides which users revoked consent and which calls are answered \
            429, 500 or dropped (by user, not by the order calls arrive; see `simulator serve --seed`), and the transfer_subs \
            and team B's subs, so the same seed gives the same answers (who is pending and why, failures by class). Times, \
            rates, ledger IDs and hashes, the access tokens obtained, and what the timed outage adds (its 503 answers and \
            the retries they cause) differ from run to run.
            """, valueName: "N"))
    var seed: UInt64 = 1

    func run() async throws {
        let given = directory ?? (NSTemporaryDirectory() + "handover-demo-" + UUID().uuidString.prefix(8).lowercased())
        // Absolute, so that the commands it prints run from any directory.
        let dir = URL(fileURLWithPath: given).standardizedFileURL.path
        var demo = DemoTransfer(directory: dir, users: users, seed: seed)
        let binary = HandoverBinary.current
        demo.binaryDirectory = binary.isOnPath ? nil : binary.directory
        // Written as each part ends, so a reader sees it happen even through a pipe.
        try await demo.run { Console.now($0) }
        if !binary.isOnPath {
            Console.now(
                "handover is \(binary.path), not on your PATH; to type `handover` in any shell, as the guides do,\n"
                    + "install it: sudo install -m 755 \(binary.path) /usr/local/bin/ (README.md, \"Install\", has the manual pages too)")
        }
    }
}
