import ArgumentParser
import Foundation
import Logging
import Migration

/// `handover preflight`: whether a run can start, before anything is spent.
struct PreflightCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preflight", abstract: "Check, before a run, that the ledger, the key, the input, the disk, the clock and Apple are ready.",
        discussion: """
            One line per check and a verdict. Local checks: the ledger opens and is these credentials' team's; the IDs have Apple's forms; \
            the .p8 key signs ES256 client secrets that verify; the input passes a run's checks; the disk has room for a run over it. \
            Then Apple: the clock is within a minute of Apple's, and the token endpoint grants an access token (one call, recorded). \
            --test-user (team A, with --target) generates one transfer identifier and --test-transfer-sub (team B) exchanges one, each \
            recorded as a run of one user. Exit 0 when every check passes, 3 when Apple refuses, 2 for a problem here.
            """, exits: CommandExits.preflight)

    @OptionGroup var ledgerOptions: LedgerOptions
    @OptionGroup var apple: AppleOptions
    @Option(help: ArgumentHelp("Team A: the users CSV a run will read.", valueName: "file")) var users: String?
    @Option(help: ArgumentHelp("Team B: the handoff package (with --sender-key) or transfers CSV a run will read.", valueName: "path")) var transfers:
        String?
    @Option(name: .customLong("sender-key"), help: ArgumentHelp("Team A's verifier key, for a package.", valueName: "file")) var senderKey: String?
    @Option(
        name: .customLong("test-user"),
        help: ArgumentHelp("Team A: a user the team controls, whose transfer identifier is generated (recorded).", valueName: "sub")) var testUser:
        String?
    @Option(help: ArgumentHelp("Team A: the recipient team, for --test-user.", valueName: "team")) var target: String?
    @Option(
        name: .customLong("test-transfer-sub"), help: ArgumentHelp("Team B: a transfer identifier to exchange (recorded).", valueName: "transfer_sub")
    ) var testTransferSub: String?
    @Option(help: SummaryFormat.help) var format: SummaryFormat = .text

    func validate() throws {
        if users != nil, transfers != nil { throw ValidationError("pass --users (team A) or --transfers (team B), not both") }
        if testUser != nil, target == nil { throw ValidationError("--test-user needs --target") }
    }

    func run() async throws {
        var preflight = Preflight(ledgerDirectory: ledgerOptions.directory, credentials: try apple.given(), endpoints: apple.endpoints)
        preflight.ledgerOptions = ledgerOptions.options(.readWrite, for: nil)
        preflight.inputPath = users ?? transfers
        preflight.senderKey = try senderKey.map { try pinnedKey($0, option: "--sender-key") }
        preflight.testUser = testUser
        preflight.target = target
        preflight.testTransferSub = testTransferSub
        var logger = Logger(label: "handover")
        logger.logLevel = .warning
        let report = await preflight.run(logger: logger)
        if format == .json { Console.data(report.json) } else { Console.out(report.text) }
        if report.exitStatus != .success { throw CLIExit(report.exitStatus, nil) }
    }
}
