import AppleID
import ArgumentParser
import Basics
import Foundation
import Ledger
import Logging
import Migration
import Synchronization

/// Options every batch run shares.
struct RunOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Where to write the output CSV (rewritten from the ledger, complete after any number of runs); - for standard output (the summary then goes to standard error).",
            valueName: "file"))
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

    @Option(
        help: ArgumentHelp(
            "Seconds the calls in flight get to finish after Ctrl-C or SIGTERM; a second signal ends them at once.", valueName: "seconds"))
    var grace: Double = 10

    @Option(
        name: .customLong("max-retry-after"),
        help: ArgumentHelp(
            "The longest Retry-After honoured, seconds; Apple asking for longer stops the run (exit 1, resumable).", valueName: "seconds"))
    var maxRetryAfter: Double = 600

    @Option(
        name: .customLong("outage-limit"),
        help: ArgumentHelp(
            "How long Apple may stay unavailable, seconds, while the run waits (failing nobody); then it stops (exit 1, resumable).",
            valueName: "seconds"))
    var outageLimit: Double = 900

    @Option(
        name: .customLong("max-rate"), help: ArgumentHelp("Calls to Apple a second at most (default: as fast as Apple answers).", valueName: "calls"))
    var maxRate: Double?

    @Option(
        name: .customLong("metrics-file"),
        help: ArgumentHelp(
            "Keep the run's progress in Prometheus text format in this file (for node_exporter's textfile collector), rewritten every 5 s and at the end.",
            valueName: "file"))
    var metricsFile: String?

    @Option(
        help: ArgumentHelp(
            "Stop the run (exit 3) when one refusal answers this share of the first 200 calls or of any 500 in a row: a percentage, or off.",
            valueName: "N%|off"))
    var breaker: BreakerThreshold = .percent(95)

    func validate() throws {
        guard (1...1024).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 1024") }
        guard grace >= 0, grace <= 3600 else { throw ValidationError("--grace must be 0 to 3600 seconds") }
        guard maxRetryAfter >= 0, maxRetryAfter <= 86_400 else { throw ValidationError("--max-retry-after must be 0 to 86400 seconds") }
        guard outageLimit >= 0, outageLimit <= 7 * 86_400 else { throw ValidationError("--outage-limit must be 0 to 604800 seconds (a week)") }
        if let maxRate {
            guard maxRate >= 0.01, maxRate <= 1_000_000 else { throw ValidationError("--max-rate must be 0.01 to 1000000 calls a second") }
        }
    }

    /// The run these options ask for, stopped early through `interruption`.
    func options(interruption: RunInterruption) -> MigrationRun.Options {
        var options = MigrationRun.Options()
        options.concurrency = concurrency
        options.retryFailed = retryFailed
        options.dryRun = dryRun
        options.outputPath = dryRun ? nil : out
        options.interruption = interruption
        options.grace = .milliseconds(Int64((grace * 1000).rounded()))
        options.pace = pace
        options.breaker = breaker.settings
        options.metricsFile = dryRun ? nil : metricsFile
        return options
    }

    /// The pace these options ask for.
    var pace: ApplePace.Settings {
        var pace = ApplePace.Settings()
        pace.maximumRetryAfter = .milliseconds(Int64((maxRetryAfter * 1000).rounded()))
        pace.outageLimit = .milliseconds(Int64((outageLimit * 1000).rounded()))
        pace.maximumRate = maxRate
        return pace
    }
}

/// `--breaker`: a percentage of calls (`95%`, `95`) or `off`.
enum BreakerThreshold: ExpressibleByArgument, Equatable, CustomStringConvertible {
    case off
    case percent(Double)

    /// As the user writes it: `95%`, `99.5%`, `off`.
    var description: String {
        switch self {
        case .off: "off"
        case .percent(let value): (value.rounded() == value ? String(Int(value)) : String(value)) + "%"
        }
    }

    /// The default in `--help`, as the user writes it.
    var defaultValueDescription: String { description }

    init?(argument: String) {
        if argument == "off" {
            self = .off
            return
        }
        let digits = argument.hasSuffix("%") ? String(argument.dropLast()) : argument
        guard let value = Double(digits), value > 0, value <= 100 else { return nil }
        self = .percent(value)
    }

    /// The breaker's settings; nil when off.
    var settings: FailureBreaker.Settings? {
        switch self {
        case .off: nil
        case .percent(let value): FailureBreaker.Settings(share: value / 100)
        }
    }
}

/// How often a run without a terminal logs its progress line to standard error.
let progressLogInterval = Duration.seconds(10)

/// Runs a job, prints warnings, the progress line (on a terminal, redrawn; otherwise a line
/// every ``progressLogInterval``) and the summary; exits with
/// the run's exit status (README.md, "Migrating: both teams' workflow": 0, 1, 3, 130 or 143).
func runMigration(
    _ kind: MigrationJob.Kind, input: String, ledger: LedgerOptions, apple: AppleOptions, run: RunOptions,
    configure: (inout MigrationJob) throws -> Void = { _ in }
) async throws {
    var job = MigrationJob(
        kind: kind, ledgerDirectory: ledger.directory, inputPath: input, credentials: try apple.credentials(), endpoints: apple.endpoints)
    job.ledgerOptions = ledger.options(.readWrite, for: nil)
    let interruption = RunInterruption()
    job.options = run.options(interruption: interruption)
    job.force = run.force
    try configure(&job)
    let onTerminal = isatty(STDERR_FILENO) == 1
    if onTerminal {
        job.options.onProgress = { line in FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8)) }
    } else {
        // Cron, systemd, nohup: a line of its own every so often, for the log.
        let last = Mutex(ContinuousClock.now)
        job.options.onProgress = { line in
            let due = last.withLock { last in
                guard ContinuousClock.now - last >= progressLogInterval else { return false }
                last = .now
                return true
            }
            if due { FileHandle.standardError.write(Data("handover: \(Timestamp.now()) progress: \(line)\n".utf8)) }
        }
    }
    // Said once, on its own line, whether or not a terminal shows the progress line.
    job.options.onNotice = { text in FileHandle.standardError.write(Data(((onTerminal ? "\r\u{1B}[K" : "") + "handover: " + text + "\n").utf8)) }
    // The run's stop is said by the summary and the last line; the log keeps warnings only.
    var logger = Logger(label: "handover")
    logger.logLevel = .warning
    let summary = try await InterruptSignals.forwarding(to: interruption, grace: run.grace) {
        try await job.execute(logger: logger) { Console.error("warning: " + $0) }
    }
    if onTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    // With the output on standard output (--out -), the summary goes to standard error.
    let toStandardError = job.options.outputPath == "-"
    switch (run.format, toStandardError) {
    case (.json, false): Console.data(summary.json)
    case (.json, true): Console.error(summary.json)
    case (_, false): Console.out(summary.text)
    case (_, true): Console.error(summary.text)
    }
    if summary.exitStatus != .success { throw CLIExit(summary.exitStatus, summary.stoppedBy.map { stopMessage($0, reason: summary.stopReason) }) }
}

/// The last line of a run that stopped early: why, in its reason's words.
private func stopMessage(_ failure: CallFailure, reason: RunFinished.StopReason?) -> String {
    let message = InertText.forScreen(failure.message)
    return switch reason ?? .credentials {
    // Apple's refusals already say so ("Apple refused the client credentials (invalid_client)").
    case .credentials: message.hasPrefix("Apple refused") ? message : "Apple refused the credentials: \(message)"
    case .breaker: "stopped by the breaker: \(message)"
    case .outage, .retryAfter: "stopped, nobody lost; run the same command again: \(message)"
    }
}

/// `handover generate`: team A turns its users' `sub`s into transfer identifiers.
struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Team A: generate transfer identifiers for the recipient team.",
        discussion:
            "Reads a CSV with a header naming `sub` (required) and `account_id`; writes \(MigrationOutputRow.generation.names.joined(separator: ",")). Users already done for this target are skipped; the output is rewritten from the ledger.",
        exits: CommandExits.run)

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
        discussion:
            "Reads team A's signed handoff package (checked with --sender-key before any call to Apple; a package that fails is refused with exit 2) or a bare CSV with a header naming `transfer_sub` (required) and `account_id` (recorded as unsigned); writes \(MigrationOutputRow.exchange.names.joined(separator: ",")). Users already exchanged are skipped; the output is rewritten from the ledger. For a package, a receipt for team A is written (see --receipt).",
        exits: CommandExits.run)

    @OptionGroup var ledgerOptions: LedgerOptions
    @OptionGroup var apple: AppleOptions
    @Option(
        help: ArgumentHelp(
            "Team A's handoff package (a directory from `handover handoff issue`), or a bare CSV (columns transfer_sub, account_id).",
            valueName: "path")) var transfers: String
    @Option(
        name: .customLong("sender-key"), help: ArgumentHelp("Team A's verifier key, pinned out of band; required for a package.", valueName: "file"))
    var senderKey: String?
    @Option(help: ArgumentHelp("Where to write the receipt for team A (default: receipt-<team A>-NNNN beside --out).", valueName: "dir")) var receipt:
        String?
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
struct ClientSecretCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client-secret", abstract: "Print a client secret (ES256 JWT) for calling Apple with curl.", exits: CommandExits.noLedger)

    @OptionGroup var apple: AppleOptions
    @Option(help: "Lifetime in seconds (at most 15777000, six months).") var lifetime: Int64 = ClientSecretSigner.defaultLifetime

    func run() async throws {
        Console.data(try await ClientSecretSigner(credentials: apple.credentials()).make(lifetime: lifetime).token)
    }
}
