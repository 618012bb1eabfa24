import AppleID
import Basics
import Foundation
import Ledger
import Logging
import Projections

/// One batch run over a user list: decides from the ledger who is already done, calls
/// Apple for the rest with bounded concurrency, records every outcome (a user counts as
/// done only once its event is durable), then writes the output CSV from the ledger.
public struct MigrationRun: Sendable {
    /// How a run behaves.
    public struct Options: Sendable {
        /// Users in flight at once.
        public var concurrency = 16
        /// Also retry users whose last attempt failed.
        public var retryFailed = false
        /// Validate and plan, call nobody, record nothing.
        public var dryRun = false
        /// Where to write the output CSV.
        public var outputPath: String?
        /// Called about twice a second with the progress line (for a terminal).
        public var onProgress: (@Sendable (String) -> Void)?
        /// Users whose data keys are made in one key-store transaction.
        public var preparationChunk = 1024
        /// Set by a signal handler to end the run early (see ``RunInterruption``).
        public var interruption: RunInterruption?
        /// How long calls in flight may take to finish after an interruption before they are abandoned.
        public var grace: Duration = .seconds(10)
        /// An exchange's input, recorded in "run started": a verified package or a bare CSV.
        public var handoff: HandoffInput?
        /// How patient the run is with Apple: the `Retry-After` ceiling, the outage limit, a rate cap.
        public var pace = ApplePace.Settings()
        /// When nearly every call refused the same way stops the run; nil never.
        public var breaker: FailureBreaker.Settings? = FailureBreaker.Settings()
        /// Hears what the run says once, whatever the terminal: Apple unavailable and why, Apple
        /// answering again, the reason it stopped.
        public var onNotice: (@Sendable (String) -> Void)?
        /// Where to keep the run's progress in Prometheus text format (for node_exporter's
        /// textfile collector), rewritten every few seconds and at the end.
        public var metricsFile: String?

        public init() {}
    }

    public let ledger: Ledger
    public let projection: UserProjection
    public let step: any MigrationStep
    public let users: UserList
    public let options: Options
    public let logger: Logger

    public init(ledger: Ledger, projection: UserProjection, step: any MigrationStep, users: UserList, options: Options, logger: Logger) {
        self.ledger = ledger
        self.projection = projection
        self.step = step
        self.users = users
        self.options = options
        self.logger = logger
    }

    /// Which users this run will attempt, and which it skips.
    public struct Plan: Sendable {
        public var pending: [MigrationUser] = []
        public var alreadyDone = 0
        /// Team B's users who signed in with their `transfer_sub`: done, no call needed.
        public var doneBySignIn = 0
        public var skippedFailed = 0
    }

    /// Reads the ledger: done users (their success event exists, or they are done another way,
    /// as by a sign-in) and, unless retrying, users whose last attempt failed are left out.
    public func plan() async throws -> Plan {
        try await projection.readInBackground(ledger) { [self] snapshot, view in
            var plan = Plan()
            for user in users.users {
                if try view.sequence(forIdempotencyKey: step.idempotencyKey(for: user)) != nil {
                    plan.alreadyDone += 1
                    continue
                }
                let state = try snapshot.user(with: step.identifier(for: user))
                if let state, step.isDoneWithoutCall(state) {
                    plan.doneBySignIn += 1
                } else if !options.retryFailed, state?.status == .failed {
                    plan.skippedFailed += 1
                } else {
                    plan.pending.append(user)
                }
            }
            return plan
        }
    }

    /// Runs the migration against `client` with `credentials` and returns the summary.
    /// "run started" and "run finished" bracket everything the run records.
    public func run(
        client: AppleIDClient, credentials: AppleCredentials, retryPolicy: RetryPolicy = RetryPolicy(),
        clientSecretLifetime: Int64 = ClientSecretSigner.defaultLifetime, tokenRenewal: TokenRenewal = TokenRenewal()
    ) async throws -> RunSummary {
        let started = ContinuousClock.now
        let plan = try await plan()
        var summary = RunSummary(command: step.command, users: users.users.count)
        summary.handoff = options.handoff
        summary.alreadyDone = plan.alreadyDone
        summary.doneBySignIn = plan.doneBySignIn
        summary.skippedFailed = plan.skippedFailed
        if options.dryRun {
            summary.dryRun = true
            summary.notAttempted = plan.pending.count
            return summary
        }
        let runID = UUID().uuidString.lowercased()
        summary.runID = runID
        // Held until the run returns: `status` tells this run running from one that was killed.
        let lock = try RunLock(runID, in: ledger.directory, holder: RunLock.Holder(host: ledger.actor.host, attempting: plan.pending.count))
        defer { lock.release() }
        try await recordStart(runID: runID)
        let pace = ApplePace(options.pace, onChange: sayApplesAvailability)
        let progress = RunProgress(total: plan.pending.count, pace: pace)
        let ledger = self.ledger
        let session = AppleSession(
            client: client, credentials: credentials, retryPolicy: retryPolicy, pace: pace, clientSecretLifetime: clientSecretLifetime,
            tokenRenewal: tokenRenewal,
            onToken: { outcome in
                if case .issued = outcome { progress.tokenIssued() }
                _ = try await ledger.append(.token(outcome, credentials: credentials, runID: runID))
            },
            onRetry: { _ in progress.retried() })
        let metricsFile = options.metricsFile.map { RunMetricsFile(path: $0, command: step.command) }
        let metricsWriter = metricsFile.map { writeMetrics(to: $0, progress: progress, pace: pace) }
        defer { metricsWriter?.cancel() }
        let reporter = options.onProgress.map { reportProgress(progress, to: $0) }
        defer { reporter?.cancel() }
        try await callApple(for: plan.pending, session: session, runID: runID, progress: progress, pace: pace)
        try await recordFinish(&summary, pending: plan.pending.count, progress: progress, pace: pace, since: started, runID: runID)
        if let path = options.outputPath {
            summary.outputRows = try await writeOutput(to: path)
            summary.outputPath = path
        }
        metricsWriter?.cancel()
        await metricsWriter?.value
        if let metricsFile {
            do {
                try metricsFile.write(metricsFile.text(progress.snapshot, total: progress.total, apple: pace.status, exitStatus: summary.exitStatus))
            } catch {
                logger.warning("\(error)")
            }
        }
        return summary
    }

    /// Records "run started": the input (its absolute path, so that the command `status`
    /// prints to resume the run runs from any directory), its digest, the target, the package
    /// it came in.
    private func recordStart(runID: String) async throws {
        let started = RunStarted(
            command: step.command, inputPath: URL(fileURLWithPath: users.path).standardizedFileURL.path, inputSHA256: users.sha256,
            targetTeam: step.targetTeam, userCount: users.users.count,
            handoff: options.handoff?.recorded, handoffManifestSHA256: options.handoff?.manifestSHA256)
        _ = try await ledger.append(EventDraft(.runStarted(started), runID: runID))
    }

    /// Says when Apple becomes unavailable to the run, and when it answers again.
    private var sayApplesAvailability: @Sendable (ApplePace.Change) -> Void {
        { [logger, notice = options.onNotice, outageLimit = options.pace.outageLimit] change in
            let text =
                switch change {
                case .unavailable(let cause):
                    "Apple unavailable: \(InertText.forScreen(cause.description)). Waiting for it: no user is failed for it, and the run stops (resumably) if it lasts over \(outageLimit.spoken) (--outage-limit)"
                case .available(let after):
                    "Apple answers again, after \(after.spoken)"
                }
            logger.debug("\(text)")
            notice?(text)
        }
    }

    /// Writes the run's figures to `file` every 5 s until cancelled; warns once if it cannot.
    private func writeMetrics(to file: RunMetricsFile, progress: RunProgress, pace: ApplePace) -> Task<Void, Never> {
        Task { [logger] in
            var warned = false
            while !Task.isCancelled {
                do { try file.write(file.text(progress.snapshot, total: progress.total, apple: pace.status, exitStatus: nil)) } catch {
                    if !warned { logger.warning("\(error)") }
                    warned = true
                }
                // Cancellation is expected: the loop ends on it.
                try? await Task.sleep(for: .seconds(5))
            }
        }
    }

    /// Hands the progress line to `report` twice a second until cancelled.
    private func reportProgress(_ progress: RunProgress, to report: @escaping @Sendable (String) -> Void) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                // Cancellation is expected: the loop ends on it.
                try? await Task.sleep(for: .milliseconds(500))
                report(progress.line)
            }
        }
    }

    /// Calls Apple for each of `pending` from `options.concurrency` workers until they are
    /// done, the run stops, or an interruption's grace period ends (which abandons the calls
    /// still in flight).
    private func callApple(
        for pending: [MigrationUser], session: AppleSession, runID: String, progress: RunProgress, pace: ApplePace
    ) async throws {
        let queue = WorkQueue(users: pending, chunk: options.preparationChunk, step: step)
        let breaker = options.breaker.map(FailureBreaker.init)
        let interruption = options.interruption
        let ledger = self.ledger
        let workers = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<max(1, options.concurrency) {
                    group.addTask {
                        // A worker calls Apple for its next user while its previous user's event
                        // is being made durable: at most one event per worker is in flight, and a
                        // user is counted only once its event is on disk.
                        try await withThrowingTaskGroup(of: Void.self) { recording in
                            var inFlight = false
                            while progress.stopReason == nil, interruption?.signal == nil, let user = try await queue.next() {
                                guard
                                    let (draft, outcome) = try await call(user, session: session, runID: runID, progress: progress, breaker: breaker)
                                else { continue }
                                if inFlight { try await recording.next() }
                                recording.addTask {
                                    _ = try await ledger.append(draft)
                                    progress.count(outcome)
                                }
                                inFlight = true
                            }
                            try await recording.waitForAll()
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        // At an interruption, no user waits for Apple any longer; after its grace period,
        // cancelling the workers abandons the calls still in flight.
        let cutOff = interruption.map { interruption in
            Task { [grace = options.grace] in
                await interruption.waitForRequest()
                pace.halt()
                await interruption.waitForCutOff(grace: grace)
                if !Task.isCancelled { workers.cancel() }
            }
        }
        defer { cutOff?.cancel() }
        try await workers.value
    }

    /// Completes `summary` from what the run counted and records "run finished".
    private func recordFinish(
        _ summary: inout RunSummary, pending: Int, progress: RunProgress, pace: ApplePace, since started: ContinuousClock.Instant, runID: String
    ) async throws {
        progress.fill(&summary)
        summary.notAttempted = pending - summary.succeeded - summary.failed - summary.abandoned
        summary.stop = progress.stopReason
        let pauses = pace.pauses
        if pauses.callsRefused > 0 {
            summary.appleUnavailable = RunFinished.AppleUnavailable(
                pauses: pauses.count, pausedMilliseconds: Int(pauses.total.inSeconds * 1000), callsRefused: pauses.callsRefused)
        }
        summary.interrupted = options.interruption?.signal
        summary.durationSeconds = (ContinuousClock.now - started).inSeconds
        let finished = RunFinished(
            command: step.command, counts: summary.counts, durationMilliseconds: Int(summary.durationSeconds * 1000),
            exitStatus: Int(summary.exitStatus.rawValue), stoppedBy: summary.stoppedBy, stopReason: summary.stopReason,
            interrupted: summary.interrupted?.rawValue, appleUnavailable: summary.appleUnavailable)
        _ = try await ledger.append(EventDraft(.runFinished(finished), runID: runID))
    }

    /// One user's call to Apple: the event recording its success or failure, and how the user
    /// counts once that event is durable; nil when there is nothing to record. A refused
    /// credential, the pace's patience running out and the breaker stop the run. A call cut off
    /// by cancellation (an interruption's grace period ended) records nothing: its outcome at
    /// Apple is unknown, and the next run calls again; nor does a user who was waiting for Apple
    /// when the run stopped.
    private func call(
        _ user: MigrationUser, session: AppleSession, runID: String, progress: RunProgress,
        breaker: FailureBreaker?
    ) async throws -> (EventDraft, RunProgress.Outcome)? {
        do {
            let draft = try await step.perform(user, session: session, runID: runID)
            _ = breaker?.record(nil)
            return (draft, .succeeded)
        } catch let error where Task.isCancelled && (error is CancellationError || error is AppleIDError) {
            progress.abandoned()
            return nil
        } catch is CancellationError {
            // The pace was halted by an interruption while this user waited for Apple.
            return nil
        } catch let stop as ApplePaceStop {
            if progress.stop(.pace(stop)) { logger.notice("run stopped: \(stop)") }
            return nil
        } catch let error as AppleIDError {
            if error.stopsRun {
                if progress.stop(.credentialsRefused(error)) {
                    logger.notice("run stopped: Apple refused the credentials", metadata: ["error": "\(error)"])
                }
                return nil
            }
            let failure = CallFailure(error)
            if let trip = breaker?.record(error.isTransient ? nil : failure.kind.rawValue, message: error.message) {
                let stop = RunStop.breaker(trip, command: step.command)
                if progress.stop(stop) { logger.notice("run stopped: \(stop.failure.message)") }
            }
            return (step.failureEvent(user, failure: failure, runID: runID), .failed(class: failure.kind.rawValue))
        }
    }

    /// Writes the output CSV from the ledger: one row per input user that is done, in input
    /// order, whatever run (or sign-in) did it. Returns the number of rows.
    @discardableResult
    public func writeOutput(to path: String) async throws -> Int {
        let rows: [MigrationOutputRow] = try await projection.readInBackground(ledger) { [self] snapshot, view in
            try users.users.compactMap { user in
                if let sequence = try view.sequence(forIdempotencyKey: step.idempotencyKey(for: user)), let event = try view.event(sequence) {
                    return try step.outputRow(for: user, event: event, sealer: ledger.sealer)
                }
                guard let state = try snapshot.user(with: step.identifier(for: user)), step.isDoneWithoutCall(state) else { return nil }
                return try step.outputRow(for: user, state: state, sealer: ledger.sealer)
            }
        }
        try MigrationOutputRow.write(rows, as: step.output, to: path)
        return rows.count
    }
}
