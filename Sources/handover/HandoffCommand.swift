import ArgumentParser
import Basics
import Ledger
import LogEngine
import Migration

/// `handover handoff`: the signed halves of a transfer (docs/migrating.md, "Both halves").
struct HandoffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff", abstract: "Signed handoff packages: team A issues them and confirms receipts, team B receives them.",
        discussion:
            "Team B receives a package as soon as it arrives (`handover handoff receive`), so every handed-over user is known before the exchange; `handover exchange --transfers PACKAGE --sender-key FILE` receives it too when it was not received before.",
        subcommands: [HandoffIssueCommand.self, HandoffConfirmCommand.self, HandoffReceiveCommand.self])
}

/// Reads a pinned verifier key file; a missing or malformed one is a usage error.
func pinnedKey(_ path: String, option: String) throws -> VerifierKey {
    try CommandLineFileError.reading(option) { try VerifierKey.read(from: path) }
}

/// `handover handoff issue`: the next signed package of generated identifiers for a target team.
struct HandoffIssueCommand: AsyncParsableCommand, LedgerCommand {
    var ledgerRole: LedgerCreated.Role? { .sender }

    static let configuration = CommandConfiguration(
        commandName: "issue",
        abstract: "Write the next signed handoff package for the target team (every identifier generated since the last package).",
        discussion:
            "The package is a directory: rows.csv (account_id,transfer_sub,seq,salt), manifest.txt (a signed note holding the rows' SHA-256 and Merkle root and a signed checkpoint covering them) and consistency.txt (a consistency proof from the previous package's checkpoint). Exits 1 when there is nothing new to hand over.",
        exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions
    @Option(help: ArgumentHelp("The recipient team's 10-character team ID.", valueName: "team")) var target: String
    @Option(help: ArgumentHelp("The package directory to make (it must not exist).", valueName: "dir")) var out: String

    func run() async throws {
        // Opened with its projections, so they fold the event this appends.
        let (ledger, _) = try ledgerOptions.open(.readWrite, for: self)
        defer { ledger.close() }
        let issued = try await HandoffIssuer(ledger: ledger).issue(target: target, into: out)
        guard let issued else {
            throw CLIExit(.failed, "no transfer identifier was generated for \(target) since the last package; nothing was written")
        }
        Console.out(
            """
            handoff package \(issued.package) for team \(issued.targetTeam) written to \(out)
              rows: \(issued.rowCount) (events \(issued.previousTreeSize + 1) to \(issued.checkpoint.treeSize) of this ledger)
              manifest sha256: \(issued.manifestSHA256)
              checkpoint: \(counted(issued.checkpoint.treeSize, "event")), signed by \(issued.checkpoint.origin)
            Send the directory to team \(issued.targetTeam), with this ledger's verifier key given out of band (once), which they pin:
              \(ShellWord.handover("checkpoint", ledger: ledgerOptions.directory, "--public-key > SENDER.PUB"))
            The day it arrives, team \(issued.targetTeam) checks it and records its users, then exchanges them (LEDGER being theirs):
              handover handoff receive \(ShellWord.quoted(out)) --ledger LEDGER --sender-key SENDER.PUB
              handover exchange --ledger LEDGER --transfers \(ShellWord.quoted(out)) --sender-key SENDER.PUB --out EXCHANGED.CSV
            """)
    }
}

/// `handover handoff confirm`: team B's receipt, checked and recorded.
struct HandoffConfirmCommand: AsyncParsableCommand, LedgerCommand {
    var ledgerRole: LedgerCreated.Role? { .sender }

    static let configuration = CommandConfiguration(
        commandName: "confirm", abstract: "Check team B's receipt for a package (their cosignature and signed checkpoint) and record it.",
        discussion: "A receipt already recorded is recognized and recorded once. Exits 2 when the receipt does not check out.",
        exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions
    @Argument(help: ArgumentHelp("The receipt directory team B sent.", valueName: "receipt")) var receipt: String
    @Option(name: .customLong("recipient-key"), help: ArgumentHelp("Team B's verifier key, pinned out of band.", valueName: "file")) var recipientKey:
        String

    func run() async throws {
        let key = try pinnedKey(recipientKey, option: "--recipient-key")
        let (ledger, _) = try ledgerOptions.open(.readWrite, for: self)
        defer { ledger.close() }
        let outcome = try await ReceiptConfirmation(ledger: ledger, recipientKey: key).confirm(receipt)
        let a = outcome.acknowledged
        Console.out(
            """
            receipt for handoff package \(a.package) checked: team \(a.targetTeam) cosigned this ledger's checkpoint at \(a.cosignedAt.rfc3339)
              and recorded the package as event \(a.recipientSequence) of its ledger, in its checkpoint of \(counted(a.recipientCheckpoint.treeSize, "event"))
            \(outcome.wasRecordedBefore ? "already recorded as event \(outcome.sequence); nothing new written" : "recorded as event \(outcome.sequence) (handoff acknowledged)")
            """)
    }
}

/// `handover handoff receive`: team B checks a package and takes its rows into the ledger,
/// before any call to Apple, and writes the receipt for team A.
struct HandoffReceiveCommand: AsyncParsableCommand, LedgerCommand {
    var ledgerRole: LedgerCreated.Role? { .recipient }

    static let configuration = CommandConfiguration(
        commandName: "receive", abstract: "Team B: check a signed handoff package and take its users into the ledger, before the exchange.",
        discussion:
            "Makes every check the exchange makes, records \"handoff received\" and the rows (each handed-over user is then known by transfer_sub, with team A's account_id and the package number: `serve` correlates their sign-ins, `query pending` lists them as received), and writes the receipt for team A. Calls nobody. Receiving a package again records nothing new and writes the same receipt. Exits 2 when the package does not check out (recorded as \"handoff refused\").",
        exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions
    @Argument(help: ArgumentHelp("The package directory team A sent.", valueName: "package")) var package: String
    @Option(name: .customLong("sender-key"), help: ArgumentHelp("Team A's verifier key, pinned out of band.", valueName: "file")) var senderKey:
        String
    @Option(help: ArgumentHelp("Where to write the receipt for team A (default: receipt-<sender team>-NNNN beside the package).", valueName: "dir"))
    var receipt: String?

    func run() async throws {
        let key = try pinnedKey(senderKey, option: "--sender-key")
        guard HandoffPackage.isPackage(package) else {
            throw CLIExit.usage("\(package) is not a handoff package (a directory holding manifest.txt, rows.csv and consistency.txt)")
        }
        let (ledger, _) = try ledgerOptions.open(.readWrite, for: self)
        defer { ledger.close() }
        let acceptance = HandoffAcceptance(ledger: ledger, package: HandoffPackage(path: package), senderKey: key)
        let received = try await acceptance.receive()
        let manifest = received.verified.manifest
        let path = receipt ?? MigrationJob.defaultReceiptPath(beside: package, sender: manifest.senderTeam, package: manifest.package)
        try acceptance.writeReceipt(for: received.verified, to: path)
        let rows = received.rows
        let before =
            received.verified.wasReceivedBefore
            ? " (received before as event \(received.verified.receivedSequence ?? 0))" : " as event \(received.verified.receivedSequence ?? 0)"
        Console.out(
            """
            handoff package \(manifest.package) from team \(manifest.senderTeam) checked with the pinned key and recorded\(before)
              rows: \(counted(rows.rows, "user")) handed over; \(counted(rows.chunks, "chunk")) recorded now\(rows.chunksBefore > 0 ? ", \(rows.chunksBefore) recorded before" : "")
              manifest sha256: \(received.verified.manifestSHA256)
            receipt for team \(manifest.senderTeam) written to \(path)
            Every user of the package is now known by transfer_sub: `serve` answers their sign-ins with the account_id. Exchange them with
              \(ShellWord.handover("exchange", ledger: ledgerOptions.directory, "--transfers \(ShellWord.quoted(package)) --sender-key \(ShellWord.quoted(senderKey)) --out EXCHANGED.CSV"))
            """)
    }
}
