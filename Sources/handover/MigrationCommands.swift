import AppleID
import ArgumentParser
import Foundation
import Ledger
import Logging
import Migration

/// Options every batch run shares.
struct RunOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Where to write the output CSV (rewritten from the ledger, complete after any number of runs).", valueName: "file"))
    var out: String

    @Option(help: "Users in flight at once.")
    var concurrency = 16

    @Flag(name: .customLong("retry-failed"), help: "Also retry users whose last attempt failed (otherwise they are skipped).")
    var retryFailed = false

    @Flag(name: .customLong("dry-run"), help: "Check the input and credentials, say what would be done; call and record nothing.")
    var dryRun = false

    @Flag(help: "Call Apple even though the recorded 60-day window has closed.")
    var force = false

    @Option(help: SummaryFormat.help)
    var format: SummaryFormat = .text

    @Option(help: ArgumentHelp("Seconds the calls in flight get to finish after Ctrl-C or SIGTERM; a second signal ends them at once.", valueName: "seconds"))
    var grace: Double = 10

    func validate() throws {
        guard (1...1024).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 1024") }
        guard grace >= 0, grace <= 3600 else { throw ValidationError("--grace must be 0 to 3600 seconds") }
    }
}

/// Runs a job, prints warnings, the progress line on a terminal and the summary; exits with
/// the run's exit status (README.md, "Migrating: both teams' workflow": 0, 1, 3, 130 or 143).
func runMigration(_ kind: MigrationJob.Kind, input: String, ledger: LedgerOptions, apple: AppleOptions, run: RunOptions,
                  configure: (inout MigrationJob) throws -> Void = { _ in }) async throws {
    var job = MigrationJob(kind: kind, ledgerDirectory: ledger.directory, inputPath: input, credentials: try apple.credentials(), endpoints: apple.endpoints)
    try configure(&job)
    job.options.concurrency = run.concurrency
    job.options.retryFailed = run.retryFailed
    job.options.dryRun = run.dryRun
    job.options.outputPath = run.dryRun ? nil : run.out
    job.force = run.force
    let interruption = RunInterruption()
    job.options.interruption = interruption
    job.options.grace = .milliseconds(Int64((run.grace * 1000).rounded()))
    if isatty(STDERR_FILENO) == 1 {
        job.options.onProgress = { line in FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8)) }
    }
    let logger = Logger(label: "handover")
    let summary: RunSummary
    do {
        summary = try await InterruptSignals.forwarding(to: interruption, grace: run.grace) {
            try await job.execute(logger: logger) { Console.error("warning: " + $0) }
        }
    } catch let problems as InputProblems {
        throw CLIExit.usage("the input file has problems; nothing was recorded or written:\n" + problems.description)
    } catch let refused as RunRefused {
        throw CLIExit.usage("refused before calling Apple: " + refused.description)
    } catch let refusal as HandoffRefusal {
        throw CLIExit.usage("handoff package refused (\(refusal.reason)), recorded as \"handoff refused\"; nothing was sent to Apple: \(refusal.detail)")
    } catch let error as AppleIDError where error.code == .invalidConfiguration {
        throw CLIExit.usage(error.message)
    }
    if job.options.onProgress != nil { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    if run.format == .json { print(summary.json) } else { Console.out(summary.text) }
    if summary.exitStatus != .success { throw CLIExit(summary.exitStatus, summary.stoppedBy.map { "Apple refused the credentials: \(InertText.forScreen($0.message))" }) }
}

/// `handover generate`: team A turns its users' `sub`s into transfer identifiers.
struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Team A: generate transfer identifiers for the recipient team.",
        discussion: "Reads a CSV with a header naming `sub` (required) and `account_id`; writes account_id,transfer_sub. Users already done for this target are skipped; the output is rewritten from the ledger.")

    @OptionGroup var ledgerOptions: LedgerOptions
    @OptionGroup var apple: AppleOptions
    @Option(help: ArgumentHelp("The CSV of users (columns sub, account_id).", valueName: "file")) var users: String
    @Option(help: ArgumentHelp("The recipient team's 10-character team ID.", valueName: "team")) var target: String
    @OptionGroup var run: RunOptions

    func run() async throws {
        try await runMigration(.generate(target: target), input: users, ledger: ledgerOptions, apple: apple, run: run)
    }
}

/// `handover exchange`: team B turns transfer identifiers into its own `sub`s and emails.
struct ExchangeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exchange", abstract: "Team B: exchange transfer identifiers for your team's identifiers and emails.",
        discussion: "Reads team A's signed handoff package (checked with --sender-key before any call to Apple; a package that fails is refused with exit 2) or a bare CSV with a header naming `transfer_sub` (required) and `account_id` (recorded as unsigned); writes account_id,transfer_sub,sub,email,is_private_email. Users already exchanged are skipped; the output is rewritten from the ledger. For a package, a receipt for team A is written (see --receipt).")

    @OptionGroup var ledgerOptions: LedgerOptions
    @OptionGroup var apple: AppleOptions
    @Option(help: ArgumentHelp("Team A's handoff package (a directory from `handover handoff issue`), or a bare CSV (columns transfer_sub, account_id).", valueName: "path")) var transfers: String
    @Option(name: .customLong("sender-key"), help: ArgumentHelp("Team A's verifier key, pinned out of band; required for a package.", valueName: "file")) var senderKey: String?
    @Option(help: ArgumentHelp("Where to write the receipt for team A (default: receipt-<team A>-NNNN beside --out).", valueName: "dir")) var receipt: String?
    @OptionGroup var run: RunOptions

    func run() async throws {
        let key = try senderKey.map { try pinnedKey($0, option: "--sender-key") }
        try await runMigration(.exchange, input: transfers, ledger: ledgerOptions, apple: apple, run: run) { job in
            job.senderKey = key
            job.receiptPath = receipt
        }
    }
}

/// `handover client-secret`: one client secret, for calling Apple by hand.
struct ClientSecretCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client-secret", abstract: "Print a client secret (ES256 JWT) for calling Apple with curl.")

    @OptionGroup var apple: AppleOptions
    @Option(help: "Lifetime in seconds (at most 15777000, six months).") var lifetime: Int64 = ClientSecretSigner.defaultLifetime

    func run() throws {
        do {
            print(try ClientSecretSigner(credentials: apple.credentials()).make(lifetime: lifetime).token)
        } catch let error as AppleIDError {
            throw CLIExit.usage(error.message)
        }
    }
}
