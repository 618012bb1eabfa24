import ArgumentParser
import Ledger
import Migration

/// `handover handoff`: the signed halves of a transfer (docs/migrating.md, "Both halves").
struct HandoffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff", abstract: "Team A: issue signed handoff packages and confirm team B's receipts.",
        discussion: "Team B checks a package with `handover exchange --transfers PACKAGE --sender-key FILE`, which writes the receipt.",
        subcommands: [HandoffIssueCommand.self, HandoffConfirmCommand.self])
}

/// Reads a pinned verifier key file; a missing or malformed one is a usage error.
func pinnedKey(_ path: String, option: String) throws -> VerifierKey {
    do { return try VerifierKey.read(from: path) } catch let error as LedgerError {
        throw CLIExit.usage("\(option): \(error.message)")
    }
}

/// `handover handoff issue`: the next signed package of generated identifiers for a target team.
struct HandoffIssueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issue", abstract: "Write the next signed handoff package for the target team (every identifier generated since the last package).",
        discussion: "The package is a directory: rows.csv (account_id,transfer_sub,seq), manifest.txt (a signed note holding the rows' SHA-256 and a signed checkpoint covering them) and consistency.txt (a consistency proof from the previous package's checkpoint). Exits 1 when there is nothing new to hand over.")

    @OptionGroup var ledgerOptions: LedgerOptions
    @Option(help: ArgumentHelp("The recipient team's 10-character team ID.", valueName: "team")) var target: String
    @Option(help: ArgumentHelp("The package directory to make (it must not exist).", valueName: "dir")) var out: String

    func run() async throws {
        // Opened with its projections, so they fold the event this appends.
        let (ledger, _) = try ledgerOptions.open(.readWrite)
        defer { ledger.close() }
        let issued: HandoffIssued?
        do { issued = try await HandoffIssuer(ledger: ledger).issue(target: target, into: out) } catch let refused as RunRefused {
            throw CLIExit.usage(refused.description)
        }
        guard let issued else {
            throw CLIExit(.failed, "no transfer identifier was generated for \(target) since the last package; nothing was written")
        }
        Console.out("""
        handoff package \(issued.package) for team \(issued.targetTeam) written to \(out)
          rows: \(issued.rowCount) (events \(issued.previousTreeSize + 1) to \(issued.checkpoint.treeSize) of this ledger)
          manifest sha256: \(issued.manifestSHA256)
          checkpoint: \(issued.checkpoint.treeSize) events, signed by \(issued.checkpoint.origin)
        Send the directory to team \(issued.targetTeam). They pin this ledger's verifier key (`handover checkpoint --public-key`) and run
          handover exchange --transfers \(out) --sender-key A.pub ...
        """)
    }
}

/// `handover handoff confirm`: team B's receipt, checked and recorded.
struct HandoffConfirmCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "confirm", abstract: "Check team B's receipt for a package (their cosignature and signed checkpoint) and record it.",
        discussion: "A receipt already recorded is recognized and recorded once. Exits 2 when the receipt does not check out.")

    @OptionGroup var ledgerOptions: LedgerOptions
    @Argument(help: ArgumentHelp("The receipt directory team B sent.", valueName: "receipt")) var receipt: String
    @Option(name: .customLong("recipient-key"), help: ArgumentHelp("Team B's verifier key, pinned out of band.", valueName: "file")) var recipientKey: String

    func run() async throws {
        let key = try pinnedKey(recipientKey, option: "--recipient-key")
        let (ledger, _) = try ledgerOptions.open(.readWrite)
        defer { ledger.close() }
        let outcome: ReceiptConfirmation.Outcome
        do { outcome = try await ReceiptConfirmation(ledger: ledger, recipientKey: key).confirm(receipt) } catch let refusal as HandoffRefusal {
            throw CLIExit.usage("receipt refused (\(refusal.reason)): \(refusal.detail)")
        }
        let a = outcome.acknowledged
        Console.out("""
        receipt for handoff package \(a.package) checked: team \(a.targetTeam) cosigned this ledger's checkpoint at \(a.cosignedAt.rfc3339)
          and recorded the package as event \(a.recipientSequence) of its ledger, in its checkpoint of \(a.recipientCheckpoint.treeSize) events
        \(outcome.wasRecordedBefore ? "already recorded as event \(outcome.sequence); nothing new written" : "recorded as event \(outcome.sequence) (handoff acknowledged)")
        """)
    }
}
