import AppleID
import Ledger
import LogEngine
import Logging
import Migration

/// The rehearsal's runs: each team's credentials, the stand-in's address, and the settings every
/// run of the rehearsal shares.
struct DemoJobs {
    let endpoints: AppleEndpoints
    let sender: AppleCredentials
    let recipient: AppleCredentials
    let logger = DemoJobs.quiet

    /// A logger that prints nothing below critical: the rehearsal says what happens itself.
    static var quiet: Logger {
        var logger = Logger(label: "handover.demo")
        logger.logLevel = .critical
        return logger
    }

    /// A run of `kind` on the ledger at `ledger`, from `input` to `output`, as `credentials`.
    func job(_ kind: MigrationJob.Kind, _ ledger: String, _ input: String, _ output: String, _ credentials: AppleCredentials) -> MigrationJob {
        var job = MigrationJob(kind: kind, ledgerDirectory: ledger, inputPath: input, credentials: credentials, endpoints: endpoints)
        job.options.outputPath = output
        job.options.concurrency = 32
        job.retryPolicy = RetryPolicy(maximumAttempts: 4, baseDelay: 0.05, maximumDelay: 1)
        // Short tokens show renewal; renewing with most of the lifetime left keeps a slow
        // machine from sending a call with a token that expires on the way.
        job.tokenRenewal = TokenRenewal(fraction: 0.75)
        return job
    }

    /// Team B's exchange of the package at `package` on the ledger at `ledger`, pinned to the
    /// sender's key, its receipt written to `receipt` when given.
    func exchange(_ ledger: String, _ package: String, _ output: String, senderKey: VerifierKey, receipt: String?) -> MigrationJob {
        var job = job(.exchange, ledger, package, output, recipient)
        job.senderKey = senderKey
        job.receiptPath = receipt
        return job
    }
}
