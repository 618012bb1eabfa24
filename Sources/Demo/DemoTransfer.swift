import AppleID
import AppleSimulator
import Basics
import Foundation
import Ledger
import LogEngine
import Logging
import Migration
import Projections
import Reporting

/// A whole transfer rehearsed against the Apple stand-in over loopback HTTP: both teams'
/// ledgers, a refused run, team A's generation, the handoff file, team B's exchange and a
/// resumed retry, with faults injected; then the answers to the main questions.
public struct DemoTransfer {
    public let directory: String
    public let users: Int
    /// The stand-in's seed: its secret, its revoked users and its faults (``FaultSeed``).
    public let seed: UInt64
    let senderTeam = "AAAA111111"
    let recipientTeam = "BBBB222222"
    let clientID = "com.example.notes"

    /// The directory of the `handover` binary when typing `handover` does not run it: the
    /// commands the rehearsal prints then begin by putting it first on PATH, so that they run as
    /// printed (nil when `handover` on PATH is this binary).
    public var binaryDirectory: String?

    public init(directory: String, users: Int, seed: UInt64 = 1) {
        self.directory = directory
        self.users = users
        self.seed = seed
    }

    var senderDir: String { directory + "/sender" }
    var recipientDir: String { directory + "/recipient" }
    var usersPath: String { directory + "/users.csv" }
    var lateUsersPath: String { directory + "/users-late.csv" }
    var exchangedPath: String { directory + "/exchanged.csv" }

    /// Runs the rehearsal and prints through `say`.
    public func run(_ say: (String) -> Void) async throws {
        let started = Date()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let acceptedAt = Timestamp(seconds: (Timestamp.now().seconds / 86_400 - 20) * 86_400)
        say("Rehearsing a transfer of \(users) users of \(clientID) from team \(senderTeam) to team \(recipientTeam)\n  in \(directory)\n")
        let (simulator, teams) = try await startStandIn(acceptedAt: acceptedAt, say)
        defer { Task { await simulator.stop() } }
        try await createLedgers(acceptedAt: acceptedAt)
        try writeUsers(to: usersPath, late: lateUsersPath)
        let jobs = DemoJobs(endpoints: AppleEndpoints(baseURL: simulator.baseURL), sender: teams.sender, recipient: teams.recipient)
        try await generate(jobs, say)
        let pins = (
            sender: try pinnedKey(of: senderDir, to: directory + "/sender.pub"),
            recipient: try pinnedKey(of: recipientDir, to: directory + "/recipient.pub")
        )
        say("\n  (each team pins the other's verifier key, from `handover checkpoint --public-key`: sender.pub, recipient.pub)")
        say(
            "\n$ handover handoff issue --target \(recipientTeam) --out handoff-0001   (team A)\n"
                + indent(try await issue(into: directory + "/handoff-0001")))
        try await refuseTampered(jobs, senderPin: pins.sender, say)
        try await exchange(jobs, pins: pins, say)
        let heldBack = try await generateLate(jobs, say)
        let exchangedRows = try CSVTable(path: exchangedPath).rows.sorted(by: DemoTransfer.byAccountID)
        try await serveAndErase(simulator: simulator, heldBack: heldBack, exchangedRows: exchangedRows, logger: jobs.logger, say)
        try await exchangeLate(jobs, pins: pins, say)
        // 9. Team B applies the result to the app's own accounts.
        try await DemoApply(directory: directory, recipientDir: recipientDir, logger: jobs.logger).run(
            userLists: [usersPath, lateUsersPath], senderTeam: senderTeam, say)
        try answer(standIn: simulator, say)
        sayFinished(in: Date().timeIntervalSince(started), acceptedAt: acceptedAt, say)
    }

    /// Apple's stand-in, with both teams' keys and the transfer on record, its faults set; the
    /// two teams' credentials.
    private func startStandIn(
        acceptedAt: Timestamp, _ say: (String) -> Void
    ) async throws -> (RunningSimulator, (sender: AppleCredentials, recipient: AppleCredentials)) {
        let apple = try SimulatorDirectory(path: directory + "/apple", secretSeed: FaultSeed(seed))
        let senderKey = try apple.registerTeam(senderTeam, clientIDs: [clientID], keyID: "KEYA111111")
        let recipientKey = try apple.registerTeam(recipientTeam, clientIDs: [clientID], keyID: "KEYB222222")
        try apple.recordTransfer(.init(clientID: clientID, fromTeam: senderTeam, toTeam: recipientTeam, acceptedAt: acceptedAt.seconds))
        var rules = SimulatedApple.Rules()
        rules.tokenLifetime = 8
        rules.revokedFraction = 0.015
        rules.seed = FaultSeed(seed)
        var faults = FaultInjection()
        faults.latencyMilliseconds = 5
        faults.rateLimitedFraction = 0.03
        faults.retryAfterSeconds = 0
        faults.serverErrorFraction = 0.03
        faults.droppedFraction = 0.02
        faults.seed = FaultSeed(seed)
        // Team A's run meets an outage: two seconds of 503 asking to wait one, waited out.
        faults.outages = [SimulatedOutage(afterCalls: 60, lasting: .seconds(2), answer: .status(503), retryAfter: 1)]
        let simulator = try await RunningSimulator(SimulatorServer(directory: apple, rules: rules, faults: faults, logger: DemoJobs.quiet))
        say(
            TerminalText.wrap(
                "Apple stand-in on \(simulator.baseURL), seed \(seed): 5 ms latency, 3% HTTP 429, 3% HTTP 500, 2% dropped connections, a 2-second outage (503, Retry-After: 1) after 60 calls, "
                    + "1.5% of users revoked consent, 8 s access tokens (renewed with 6 s left)", continuation: "  "))
        let sender = try AppleCredentials(teamID: senderTeam, clientID: clientID, keyID: senderKey.keyID, privateKeyPath: senderKey.privateKeyPath)
        let recipient = try AppleCredentials(
            teamID: recipientTeam, clientID: clientID, keyID: recipientKey.keyID, privateKeyPath: recipientKey.privateKeyPath)
        return (simulator, (sender, recipient))
    }

    /// Each team's ledger, with the transfer date that starts the 60-day window.
    private func createLedgers(acceptedAt: Timestamp) async throws {
        for (path, team, role) in [(senderDir, senderTeam, LedgerCreated.Role.sender), (recipientDir, recipientTeam, .recipient)] {
            let projection = UserProjection()
            let ledger = try await Ledger.create(
                at: path, LedgerCreated(teamID: team, clientIDs: [clientID], role: role, ledgerID: UUID().uuidString.lowercased()),
                folders: [projection])
            try await WindowRecorder(ledger: ledger, projection: projection).record(acceptedAt: acceptedAt, correcting: false)
            ledger.close()
        }
    }

    /// 1. Team A, with the wrong key ID: Apple refuses the credentials and the run stops. 2. Team
    /// A for real.
    private func generate(_ jobs: DemoJobs, _ say: (String) -> Void) async throws {
        let wrongKey = AppleCredentials(teamID: senderTeam, clientID: clientID, keyID: "WRONGKEY01", privateKey: jobs.sender.privateKey)
        let target = MigrationJob.Kind.generate(target: recipientTeam)
        let refused = try await jobs.job(target, senderDir, usersPath, directory + "/handoff.csv", wrongKey).execute(logger: jobs.logger)
        say("\n$ handover generate --key-id WRONGKEY01 ...   (team A, wrong key ID)\n" + indent(refused.text))
        let generated = try await jobs.job(target, senderDir, usersPath, directory + "/handoff.csv", jobs.sender).execute(logger: jobs.logger)
        say("\n$ handover generate --users users.csv --target \(recipientTeam) --out handoff.csv   (team A)\n" + indent(generated.text))
    }

    /// 3. A copy altered on the way is refused before any call to Apple.
    private func refuseTampered(_ jobs: DemoJobs, senderPin: VerifierKey, _ say: (String) -> Void) async throws {
        let tampered = directory + "/handoff-0001-tampered"
        try FileManager.default.copyItem(atPath: directory + "/handoff-0001", toPath: tampered)
        try alterFirstRow(of: tampered + "/" + HandoffPackage.rowsFile)
        let refusedExchange = jobs.exchange(recipientDir, tampered, exchangedPath, senderKey: senderPin, receipt: nil)
        do {
            _ = try await refusedExchange.execute(logger: jobs.logger)
            throw SimulatorError("the tampered package was accepted")
        } catch let refusal as HandoffRefusal {
            say("\n$ handover exchange --transfers handoff-0001-tampered --sender-key sender.pub ...   (team B; one transfer_sub altered on the way)")
            say(
                TerminalText.wrap(
                    "  refused (\(refusal.reason)), exit 2, recorded as \"handoff refused\"; nothing was sent to Apple: \(refusal.detail)",
                    continuation: "    "))
        }
    }

    /// 4. Team B exchanges the genuine package (two attempts only, so some transient faults
    /// outlast the run and the resume has work), then resumes with --retry-failed; team A
    /// confirms the receipt.
    private func exchange(_ jobs: DemoJobs, pins: (sender: VerifierKey, recipient: VerifierKey), _ say: (String) -> Void) async throws {
        let package = directory + "/handoff-0001"
        let receipt = directory + "/receipt-0001"
        var firstExchange = jobs.exchange(recipientDir, package, exchangedPath, senderKey: pins.sender, receipt: receipt)
        firstExchange.retryPolicy.maximumAttempts = 2
        let exchanged = try await firstExchange.execute(logger: jobs.logger)
        say(
            "\n$ handover exchange --transfers handoff-0001 --sender-key sender.pub --out exchanged.csv --receipt receipt-0001   (team B)\n"
                + indent(exchanged.text))
        var retry = jobs.exchange(recipientDir, package, exchangedPath, senderKey: pins.sender, receipt: receipt)
        retry.options.retryFailed = true
        let retried = try await retry.execute(logger: jobs.logger)
        say(
            "\n$ handover exchange --transfers handoff-0001 --sender-key sender.pub --out exchanged.csv --retry-failed   (team B, resumed)\n"
                + indent(retried.text))
        say(
            "\n$ handover handoff confirm receipt-0001 --recipient-key recipient.pub   (team A)\n"
                + indent(try await confirm(receipt, pins.recipient)))
    }

    /// 5. Team A's last users come late: a second package, proved consistent with the first.
    /// Returns their `transfer_sub`s, in `account_id` order (not the order the runs recorded
    /// them): the same users sign in, are notified about and erased in every rehearsal with the
    /// same seed.
    private func generateLate(_ jobs: DemoJobs, _ say: (String) -> Void) async throws -> [String] {
        let late = try await jobs.job(
            .generate(target: recipientTeam), senderDir, lateUsersPath, directory + "/handoff-late.csv", jobs.sender
        ).execute(logger: jobs.logger)
        say(
            "\n$ handover generate --users users-late.csv --target \(recipientTeam) --out handoff-late.csv   (team A, users found late)\n"
                + indent(late.text))
        let second = try await issue(into: directory + "/handoff-0002")
        say("\n$ handover handoff issue --target \(recipientTeam) --out handoff-0002   (team A)\n" + indent(second))
        let rows = try CSVTable(path: directory + "/handoff-0002/" + HandoffPackage.rowsFile).rows
        let heldBack = rows.sorted(by: DemoTransfer.byAccountID).compactMap { $0["transfer_sub"] }
        say("  (handoff-0002 reaches team B late: its \(heldBack.count) users sign in first)")
        return heldBack
    }

    /// 8. The late package: its users are done by signing in, so no call is needed.
    private func exchangeLate(_ jobs: DemoJobs, pins: (sender: VerifierKey, recipient: VerifierKey), _ say: (String) -> Void) async throws {
        let lateExchange = jobs.exchange(
            recipientDir, directory + "/handoff-0002", directory + "/exchanged-late.csv", senderKey: pins.sender, receipt: directory + "/receipt-0002"
        )
        let lateExchanged = try await lateExchange.execute(logger: jobs.logger)
        say(
            "\n$ handover exchange --transfers handoff-0002 --sender-key sender.pub --out exchanged-late.csv   (team B)\n"
                + indent(lateExchanged.text))
        say(
            "\n$ handover handoff confirm receipt-0002 --recipient-key recipient.pub   (team A)\n"
                + indent(try await confirm(directory + "/receipt-0002", pins.recipient)))
    }

    /// Both ledgers verified and reconciled, then the main questions answered from team B's.
    private func answer(standIn simulator: RunningSimulator, _ say: (String) -> Void) throws {
        let recipientProjection = UserProjection()
        let recipient = try Ledger.open(at: recipientDir, folders: [recipientProjection])
        defer { recipient.close() }
        say("")
        let senderProjection = UserProjection()
        let sender = try Ledger.open(at: senderDir, folders: [senderProjection])
        defer { sender.close() }
        for (name, ledger) in [("sender", sender), ("recipient", recipient)] {
            let report = try ledger.verify()
            say("verify \(name): \(report.isIntact ? "OK" : "FAILED"), \(report.eventCount) events, head \(report.headHash.prefix(16))…")
        }
        let reconciliation = Reconciliation(
            sender: sender, senderProjection: senderProjection, recipient: recipient, recipientProjection: recipientProjection)
        let findings = try reconciliation.auditCheckpoints()
        say("\n== Both halves: handover reconcile --sender sender --recipient recipient ==")
        say(
            "\(findings.filter { $0.problem == nil }.count) of \(findings.count) checkpoints of team A's recorded by team B still extended by team A's log"
        )
        let totals = ReconcileTotal.answer.table(try reconciliation.totals().filter { $0.users > 0 }).render(.table)
        say(totals.hasSuffix("\n") ? String(totals.dropLast()) : totals)
        let answers = try recipientProjection.read(recipient) { snapshot, _ in
            let q = ComplianceQueries(snapshot: snapshot, time: .now(), sealer: recipient.sealer)
            var migrated: [UserRow] = []
            try q.forEachMigrated { migrated.append($0) }
            return (
                window: try q.window(), migrated: migrated, pending: try q.pending(), failures: try q.failuresByClass(), unmatched: try q.unmatched()
            )
        }
        say("\n== Transfer window (team B) ==\n" + answers.window.render(.table))
        say("== Who migrated (team B) ==\n" + migratedLines(answers.migrated) + "\n")
        let pending = answers.pending
        say(
            "== Who is pending and why (first \(min(8, pending.rows.count)) of \(pending.rows.count)) ==\n"
                + pending.prefix(8).withoutEmptyColumns().render(.table))
        say("== Failures by class (users whose last attempt failed, team B) ==\n" + answers.failures.render(.table))
        say("== Unmatched: Apple told us about users no migration step named ==\n" + answers.unmatched.render(.table))
        say(
            TerminalText.wrap(
                "Apple stand-in answered: "
                    + simulator.server.stats.snapshot.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
                continuation: "  ") + "\n")
    }

    /// The files the rehearsal left, and commands to explore them that run as printed.
    private func sayFinished(in seconds: TimeInterval, acceptedAt: Timestamp, _ say: (String) -> Void) {
        // In a fresh shell, in order: `handover` found as the guides type it, then the demo's directory.
        let preamble =
            (binaryDirectory.map { ["  export PATH=\(ShellWord.quoted($0)):\"$PATH\"   # handover is not on your PATH"] } ?? [])
            + ["  cd \(ShellWord.quoted(directory))"]
        say(
            """
            Rehearsal finished in \(String(format: "%.1f", seconds)) s. Files in \(directory):
              users.csv and users-late.csv (team A's lists), handoff-0001 and handoff-0002 (signed packages to team B),
              receipt-0001 and receipt-0002 (team B's cosigned receipts), sender.pub and recipient.pub (the pinned keys),
              exchanged.csv and exchanged-late.csv (team B's new identifiers), app.sqlite (the app's accounts, applied)
            Explore further: paste these lines into a shell, in order
            \(preamble.joined(separator: "\n"))
              handover query pending   --ledger recipient
              handover query migrated  --ledger recipient --format csv
              handover query user acct-00007    --ledger recipient
              handover apply --ledger recipient --to app.sqlite \\
                  --table accounts --key account_id=id --set recipient_sub=apple_sub --set email=email
              handover query failures --by-class --ledger sender
              handover query events --type run-finished --ledger recipient
              handover query events --type handoff-acknowledged --ledger sender
              handover query events --type handoff-received --ledger recipient
              handover reconcile --sender sender --recipient recipient --rows
              handover query unmatched --ledger recipient
              handover query events --type notification-rejected --ledger recipient
              handover query state --as-of \(acceptedAt.rfc3339) --ledger recipient
              handover verify --ledger recipient
              handover report --ledger recipient --html report.html
              handover export --ledger recipient --format sqlite --out handover.sqlite
              handover checkpoint --ledger recipient --out checkpoint.txt
            """)
    }

    /// Team B runs `handover serve` (the app backend reports sign-ins, among them the late
    /// package's users; Apple notifies), then support erases two users on request.
    private func serveAndErase(
        simulator: RunningSimulator, heldBack: [String], exchangedRows: [CSVTable.Row], logger: Logger, _ say: (String) -> Void
    ) async throws {
        let recipientProjection = UserProjection()
        let recipient = try Ledger.open(at: recipientDir, folders: [recipientProjection])
        defer { recipient.close() }
        // Sign-ins and notifications, as `handover serve` hears them.
        let heard = try await DemoServe(
            ledger: recipient, projection: recipientProjection, simulator: simulator, recipientTeam: recipientTeam,
            clientID: clientID, logger: logger
        )
        .run(heldBack: heldBack, exchanged: exchangedRows.compactMap { $0["transfer_sub"] })
        say("\n$ handover serve --ledger recipient   (team B; \(heard.url))")
        say(
            TerminalText.wrap(
                "  POST /apple/sign-ins: \(heard.signIns) identity tokens from the app backend (users not yet exchanged and 5 already exchanged)"))
        say(
            TerminalText.wrap(
                "  POST /apple/notifications: "
                    + heard.notifications.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")))
        say(
            TerminalText.wrap(
                "  answers: " + heard.answers.sorted { $0.key < $1.key }.map { "\($0.value)× \($0.key)" }.joined(separator: ", ")
                    + "; \(heard.erased) users erased (account deleted, policy erase)"))

        // 7. Support erases two users on request; the chain still verifies.
        let eraser = UserEraser(ledger: recipient, projection: recipientProjection)
        for sub in exchangedRows.prefix(2).compactMap({ $0["recipient_sub"] }) {
            _ = try await eraser.erase(sub, reason: "user asked for deletion (support ticket)")
        }
    }

    /// "N of M users migrated (E by exchange, S by sign-in)" and the first and last
    /// migration, from the rows of `query migrated`.
    private func migratedLines(_ migrated: [UserRow]) -> String {
        var byPath: [String: Int] = [:]
        for row in migrated { byPath[row.state.migratedVia?.name ?? "unknown", default: 0] += 1 }
        let named = [MigrationPath.exchange.name, MigrationPath.signIn.name]
        let others = byPath.keys.filter { !named.contains($0) }.sorted()
        let paths = (named + others).map { "\(byPath[$0] ?? 0) by \($0)" }.joined(separator: ", ")
        let times = migrated.compactMap(\.state.migratedAt)
        return "\(migrated.count) of \(users) users migrated (\(paths))\nfirst \(times.min()?.rfc3339 ?? "-"), last \(times.max()?.rfc3339 ?? "-")"
    }

    /// Team A's user list, `sub` and `account_id`, with one duplicate row to show the warning;
    /// the last 10 users go to `late`, the list of users team A finds after its first package.
    private func writeUsers(to path: String, late: String) throws {
        let header = "sub,account_id\r\n"
        let rows = (0..<users).map { i in
            "000\(100 + i % 900).\(String(format: "%032x", i &* 2_654_435_761 & 0xFFFF_FFFF)).\(1000 + i % 9000),acct-\(String(format: "%05d", i))\r\n"
        }
        let lateCount = min(10, users / 2)
        for (file, lines) in [(path, rows.dropLast(lateCount) + rows.prefix(1)), (late, rows.suffix(lateCount))] {
            guard FileManager.default.createFile(atPath: file, contents: Data((header + lines.joined()).utf8)) else {
                throw SimulatorError("cannot write \(file)")
            }
        }
    }

    /// Writes the verifier key of the ledger in `directory` to `path`, as a team hands it to the
    /// other (`handover checkpoint --public-key`), and returns it as pinned.
    private func pinnedKey(of directory: String, to path: String) throws -> VerifierKey {
        let ledger = try Ledger.open(at: directory)
        defer { ledger.close() }
        _ = try ledger.signingKey()
        let (line, publicKey) = try ledger.verifierKey()
        guard FileManager.default.createFile(atPath: path, contents: Data((line + "\n").utf8)) else { throw SimulatorError("cannot write \(path)") }
        return VerifierKey(name: try ledger.origin(), publicKey: publicKey)
    }

    /// `handover handoff issue` on team A's ledger; what it prints.
    private func issue(into package: String) async throws -> String {
        let ledger = try Ledger.open(at: senderDir, folders: [UserProjection()])
        defer { ledger.close() }
        guard let issued = try await HandoffIssuer(ledger: ledger).issue(target: recipientTeam, into: package) else {
            throw SimulatorError("nothing to hand over")
        }
        return TerminalText.wrap(
            "handoff package \(issued.package): \(issued.rowCount) rows, manifest sha256 \(issued.manifestSHA256.prefix(16))…, "
                + "signed checkpoint of \(issued.checkpoint.treeSize) events"
                + (issued.previousTreeSize > 0 ? ", consistency proof from \(issued.previousTreeSize)" : ""))
    }

    /// `handover handoff confirm` on team A's ledger; what it prints.
    private func confirm(_ receipt: String, _ recipientKey: VerifierKey) async throws -> String {
        let ledger = try Ledger.open(at: senderDir, folders: [UserProjection()])
        defer { ledger.close() }
        let outcome = try await ReceiptConfirmation(ledger: ledger, recipientKey: recipientKey).confirm(receipt)
        let a = outcome.acknowledged
        return TerminalText.wrap(
            "receipt checked: team \(a.targetTeam) cosigned package \(a.package)'s checkpoint and recorded it as its event \(a.recipientSequence); "
                + (outcome.wasRecordedBefore
                    ? "already recorded as event \(outcome.sequence)" : "recorded as event \(outcome.sequence) (handoff acknowledged)"))
    }

    /// Changes one character of the first row's `transfer_sub`, as a file altered on the way.
    private func alterFirstRow(of path: String) throws {
        var bytes = try FileBytes.read(path, limit: HandoffPackage.maximumRowsBytes)
        guard let lineEnd = bytes.firstIndex(of: 0x0A), let comma = bytes[lineEnd...].firstIndex(of: UInt8(ascii: ",")) else {
            throw SimulatorError("\(path) has no rows")
        }
        bytes[comma + 1] = bytes[comma + 1] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Rows in `account_id` order.
    private static func byAccountID(_ a: CSVTable.Row, _ b: CSVTable.Row) -> Bool { (a["account_id"] ?? "") < (b["account_id"] ?? "") }

    private func indent(_ text: String) -> String { text.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") }
}
