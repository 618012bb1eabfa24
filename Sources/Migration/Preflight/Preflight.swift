import AppleID
import Basics
import Crypto
import Foundation
import Ledger
import LogEngine
import Logging
import Projections

/// `handover preflight`: before anything is spent, whether a run can start. Local checks
/// first (the ledger and its role, the IDs' forms, the key, the input, the disk), then Apple
/// (its clock, then one access token, recorded as a run records it), then, if asked, one real
/// call for a user the team controls. Every check gets a line; one that needs what failed
/// before it is skipped.
public struct Preflight: Sendable {
    /// The credentials as given, not yet checked.
    public struct Credentials: Sendable {
        public var teamID: String
        public var clientID: String
        public var keyID: String
        public var privateKeyPath: String

        public init(teamID: String, clientID: String, keyID: String, privateKeyPath: String) {
            self.teamID = teamID
            self.clientID = clientID
            self.keyID = keyID
            self.privateKeyPath = privateKeyPath
        }
    }

    public var ledgerDirectory: String
    /// How the ledger is opened.
    public var ledgerOptions = Ledger.Options()
    public var credentials: Credentials
    public var endpoints: AppleEndpoints
    /// The run's input: team A's users CSV, team B's package (with `senderKey`) or bare CSV.
    public var inputPath: String?
    public var senderKey: VerifierKey?
    /// Team A: one user to generate a transfer identifier for, for `target`.
    public var testUser: String?
    public var target: String?
    /// Team B: one transfer identifier to exchange.
    public var testTransferSub: String?
    /// The largest difference from Apple's clock taken as in time.
    public var clockTolerance: TimeInterval = 60
    /// Disk a run needs per user of its input: its events, their indexes and the key store, twice over.
    public static let bytesPerUser: Int64 = 4096

    public init(ledgerDirectory: String, credentials: Credentials, endpoints: AppleEndpoints) {
        self.ledgerDirectory = ledgerDirectory
        self.credentials = credentials
        self.endpoints = endpoints
    }

    /// What Apple answers `invalid_client` for: every credential mistake, with no word of which.
    static let invalidClientCauses = [
        "the key ID is not this key's", "the team ID is not the key's team", "the client ID is not an App ID or Services ID of that team",
        "the key is revoked or not enabled for Sign in with Apple", "the client secret is signed wrongly or has expired",
    ]

    public func run(logger: Logger) async -> PreflightReport {
        var report = PreflightReport()
        let projection = UserProjection()
        let ledger: Ledger
        do {
            ledger = try Ledger.open(at: ledgerDirectory, folders: [projection], options: ledgerOptions)
        } catch let error as LedgerError where [.missingLedger, .notALedger].contains(error.code) {
            report.add("ledger", .failed, error.message)
            report.add("the rest", .skipped, "every other check needs the ledger")
            return report
        } catch {
            report.add("ledger", .failed, "\(ledgerDirectory): \(ErrorText.describing(error))")
            report.add("the rest", .skipped, "every other check needs the ledger")
            return report
        }
        defer { ledger.close() }
        let client = AppleIDClient(endpoints: endpoints, maximumConnections: 1, requestTimeout: .seconds(30))
        do {
            try await check(ledger, projection, client: client, into: &report, logger: logger)
        } catch {
            report.add("ledger", .failed, "writing to \(ledgerDirectory): \(ErrorText.describing(error))")
        }
        // Its calls are over: a shutdown fails only for a client already shut down.
        try? await client.shutdown()
        return report
    }

    private func check(
        _ ledger: Ledger, _ projection: UserProjection, client: AppleIDClient, into report: inout PreflightReport, logger: Logger
    ) async throws {
        let identity = try ledger.identity()
        let window = try projection.read(ledger) { snapshot, _ in try snapshot.window() }
        report.add(
            "ledger", .passed,
            "\(ledgerDirectory): team \(identity.teamID)'s, the \(identity.role.rawValue)'s, client IDs \(identity.clientIDs.joined(separator: ", "))"
        )
        let checked = await checkCredentials(against: identity, into: &report)
        let users = await checkInput(ledger, identity: identity, into: &report)
        checkDisk(users: users, into: &report)
        let now = Timestamp.now()
        let transferAccepted = checkWindow(window, role: identity.role, now: now, into: &report)
        guard await checkClock(client, into: &report) else {
            report.add("access token", .skipped, "Apple cannot be reached")
            return
        }
        guard let credentials = checked.credentials else {
            report.add("access token", .skipped, "the credentials above must hold first")
            return
        }
        if identity.role == .recipient, !transferAccepted {
            report.add("access token", .skipped, "team B's client ID is team B's only once the transfer is accepted: run preflight again then")
            return
        }
        let session = AppleSession(
            client: client, credentials: credentials, retryPolicy: RetryPolicy(maximumAttempts: 1),
            onToken: { outcome in _ = try await ledger.append(.token(outcome, credentials: credentials)) })
        var causes = Preflight.invalidClientCauses
        if identity.role == .recipient, window == nil { causes.append("the transfer is not accepted yet") }
        guard await checkAccessToken(session, causes: causes, ruledOut: checked.ruledOut, into: &report) else { return }
        let test = TestContext(
            ledger: ledger, projection: projection, session: session, credentials: credentials, identity: identity, window: window, logger: logger)
        if let testUser { await testGeneration(of: testUser, test, into: &report) }
        if let testTransferSub {
            let windowOpen = transferAccepted && !(window?.hasClosed(at: now) ?? false)
            await testExchange(of: testTransferSub, test, windowOpen: windowOpen, into: &report)
        }
    }

    /// The credentials against the ledger, their IDs' forms, the key file's name and the key
    /// itself (a client secret it signs verifies with its public key). Returns the credentials
    /// when all of that holds, and what was ruled out, for an `invalid_client` answer.
    private func checkCredentials(
        against identity: LedgerCreated, into report: inout PreflightReport
    ) async -> (credentials: AppleCredentials?, ruledOut: [String]) {
        let c = credentials
        var formsHold = true
        if let mismatch = RunGuards.credentialsMismatch(teamID: c.teamID, clientID: c.clientID, ledger: identity) {
            report.add("credentials", .failed, mismatch)
            formsHold = false
        }
        var forms: [String] = []
        if !AppleCredentials.isTenCharacterID(c.teamID) { forms.append("the team ID \"\(c.teamID)\" is not 10 characters of A-Z and 0-9") }
        if !AppleCredentials.isTenCharacterID(c.keyID) { forms.append("the key ID \"\(c.keyID)\" is not 10 characters of A-Z and 0-9") }
        if !AppleCredentials.isClientID(c.clientID) { forms.append("the client ID \"\(c.clientID)\" is empty or holds spaces") }
        if forms.isEmpty {
            report.add("IDs", .passed, "team ID, key ID and client ID have Apple's forms")
        } else {
            report.add("IDs", .failed, forms.joined(separator: "; "))
            formsHold = false
        }
        var ruledOut = ["the IDs have Apple's forms", "the key signs ES256 client secrets that verify"]
        let fileName = URL(fileURLWithPath: c.privateKeyPath).lastPathComponent
        if fileName.hasPrefix("AuthKey_"), fileName.hasSuffix(".p8") {
            let keyIDInName = String(fileName.dropFirst(8).dropLast(3))
            if keyIDInName == c.keyID {
                ruledOut.append("the key ID matches the .p8 file's name")
            } else {
                report.add(
                    "key file name", .warning,
                    "\(fileName) is named for key \(keyIDInName), not \(c.keyID): Apple names each .p8 for its key ID; check --key-id")
            }
        }
        do {
            let key = try AppleCredentials.privateKey(at: c.privateKeyPath)
            let credentials = AppleCredentials(teamID: c.teamID, clientID: c.clientID, keyID: c.keyID, privateKey: key)
            let secret = try await ClientSecretSigner(credentials: credentials).make()
            guard (try? await ClientSecret.verifiedClaims(secret.token, publicKey: key.publicKey)) != nil else {
                throw AppleIDError(.invalidConfiguration, "a client secret it signed does not verify with its own public key")
            }
            report.add("private key", .passed, "\(c.privateKeyPath): a P-256 key; an ES256 client secret it signs (raw 64-byte signature) verifies")
            return (formsHold ? credentials : nil, ruledOut)
        } catch let error as AppleIDError {
            report.add("private key", .failed, error.message)
        } catch {
            report.add("private key", .failed, "\(c.privateKeyPath): \(ErrorText.describing(error))")
        }
        return (nil, ruledOut)
    }

    /// The free space beside the ledger against what a run over `users` needs.
    private func checkDisk(users: Int?, into report: inout PreflightReport) {
        guard let space = DiskSpace(at: ledgerDirectory) else {
            report.add("disk", .failed, "the free space at \(ledgerDirectory) cannot be read")
            return
        }
        let need = Int64(users ?? 0) * Preflight.bytesPerUser + DiskSpace.nearlyFull
        let detail =
            "\(space) at \(ledgerDirectory); "
            + (users.map { "a run over \(counted($0, "user")) needs about \(DiskSpace.format(need))" } ?? "no input given to size a run by")
        report.add("disk", space.available >= need ? .passed : .failed, detail + (space.available >= need ? "" : ": free space first"))
    }

    /// The window, as the run's guards see it; returns whether the transfer is accepted by now.
    private func checkWindow(_ window: TransferWindow?, role: LedgerCreated.Role, now: Timestamp, into report: inout PreflightReport) -> Bool {
        switch (window, role) {
        case (let window?, _) where window.hasClosed(at: now):
            report.add(
                "window", .failed,
                "closed on \(window.deadline) (\(window.windowDays) days after \(window.acceptedAt)): Apple answers no migration call for this app")
        case (let window?, _) where now < window.acceptedAt:
            report.add("window", .passed, "opens \(window.acceptedAt), when the transfer is accepted; closes \(window.deadline)")
            return false
        case (let window?, _):
            report.add(
                "window", .passed, "open: accepted \(window.acceptedAt), closes \(window.deadline), \(counted(window.daysLeft(at: now), "day")) left")
        case (nil, .recipient):
            report.add(
                "window", .warning,
                "no transfer date recorded: record it with `\(ShellWord.handover("window", ledger: ledgerDirectory, "--accepted-at YYYY-MM-DD"))` once the transfer is accepted, so that runs see the deadline"
            )
        case (nil, _):
            report.add("window", .passed, "no transfer date recorded (team A may generate before the transfer)")
        }
        return true
    }

    /// This machine's clock against Apple's; returns whether Apple could be reached.
    private func checkClock(_ client: AppleIDClient, into report: inout PreflightReport) async -> Bool {
        do {
            guard let reading = try await client.appleClock() else {
                report.add("clock", .warning, "\(endpoints.keys) answered without a Date header: the clock is not checked")
                return true
            }
            // A slow answer widens what the header can tell, rather than passing for a wrong clock.
            let skew = reading.offset
            let inTime = abs(skew) <= clockTolerance
            var detail = String(format: "%+.0f s from Apple's (%@)", skew, endpoints.baseURL)
            if reading.roundTrip >= 2 { detail += String(format: ", within an answer that took %.0f s", reading.roundTrip) }
            report.add("clock", inTime ? .passed : .failed, detail + (inTime ? "" : ": set the clock (NTP); client secrets are dated by it"))
            return true
        } catch {
            report.add("Apple", .failed, "\(endpoints.baseURL) cannot be reached: \(ErrorText.describing(error))")
            return false
        }
    }

    /// One access token from Apple, recorded; returns whether Apple granted it. An
    /// `invalid_client` answer lists what Apple gives it for and what is ruled out here.
    private func checkAccessToken(
        _ session: AppleSession, causes: [String], ruledOut: [String], into report: inout PreflightReport
    ) async -> Bool {
        do {
            let token = try await session.accessToken()
            report.add(
                "access token", .passed,
                "Apple granted one for user.migration (fingerprint \(token.fingerprint), recorded), expiring \(Timestamp(token.expiresAt))")
            return true
        } catch let error as AppleIDError where error.code == .invalidClient || error.code == .invalidGrant {
            report.add(
                "access token", .refused,
                "Apple answered \(error.appleError ?? error.code.rawValue)" + (error.appleDescription.map { " (\"\($0)\")" } ?? "")
                    + ". Apple gives that answer for any of: \(causes.joined(separator: "; ")). Already ruled out here: \(ruledOut.joined(separator: "; "))."
            )
        } catch {
            report.add("access token", .failed, "no token: \(ErrorText.describing(error))")
        }
        return false
    }

    /// What a test call needs: the ledger, the session that has a token, who is calling.
    private struct TestContext {
        let ledger: Ledger
        let projection: UserProjection
        let session: AppleSession
        let credentials: AppleCredentials
        let identity: LedgerCreated
        let window: TransferWindow?
        let logger: Logger
    }

    /// Team A's `--test-user`: one transfer identifier generated for `--target`.
    private func testGeneration(of sub: String, _ test: TestContext, into report: inout PreflightReport) async {
        guard test.identity.role == .sender, let target else {
            report.add(
                "test user", .failed,
                test.identity.role == .sender ? "--test-user needs --target" : "--test-user is team A's; team B tests with --test-transfer-sub")
            return
        }
        await testCall(TransferIDGeneration(targetTeam: target), identifier: sub, column: "sub", test, into: &report)
    }

    /// Team B's `--test-transfer-sub`: one transfer identifier exchanged.
    private func testExchange(of transferSub: String, _ test: TestContext, windowOpen: Bool, into report: inout PreflightReport) async {
        guard test.identity.role == .recipient else {
            report.add("test transfer", .failed, "--test-transfer-sub is team B's; team A tests with --test-user")
            return
        }
        guard windowOpen else {
            report.add("test transfer", .skipped, "an exchange needs the window open")
            return
        }
        do {
            let step = TransferIDExchange(keyStore: try test.ledger.sealer.requireKeyStore())
            await testCall(step, identifier: transferSub, column: "transfer_sub", test, into: &report)
        } catch {
            report.add("test transfer", .failed, ErrorText.describing(error))
        }
    }

    /// Team A's users CSV, or team B's package or CSV, checked as a run checks it: the number of
    /// users, or nil when there is no input (or it fails).
    private func checkInput(_ ledger: Ledger, identity: LedgerCreated, into report: inout PreflightReport) async -> Int? {
        guard let inputPath else {
            report.add("input", .skipped, "no input given (--users or --transfers)")
            return nil
        }
        let column = identity.role == .sender ? "sub" : "transfer_sub"
        if HandoffPackage.isPackage(inputPath) {
            guard identity.role == .recipient, let senderKey else {
                report.add(
                    "input", .failed,
                    identity.role == .recipient
                        ? "\(inputPath) is a signed package: pass the sender's key with --sender-key"
                        : "\(inputPath) is a handoff package, which team B reads")
                return nil
            }
            do {
                let verified = try await HandoffAcceptance(ledger: ledger, package: HandoffPackage(path: inputPath), senderKey: senderKey).accept(
                    record: false)
                report.add(
                    "input", .passed,
                    "\(inputPath): team \(verified.manifest.senderTeam)'s package \(verified.manifest.package), signed and consistent, \(counted(verified.rows.count, "user"))"
                )
                return verified.rows.count
            } catch {
                report.add("input", .failed, "\(inputPath): \(ErrorText.describing(error))")
                return nil
            }
        }
        do {
            let list = try UserList(path: inputPath, keyColumn: column)
            report.add(
                "input", list.warnings.isEmpty ? .passed : .warning,
                "\(inputPath): \(counted(list.users.count, "user"))" + list.warnings.map { "\n" + $0 }.joined())
            return list.users.count
        } catch let problems as InputProblems {
            // Each problem names the file and its line, one a line.
            report.add("input", .failed, problems.description)
            return nil
        } catch {
            report.add("input", .failed, "\(inputPath): \(ErrorText.describing(error))")
            return nil
        }
    }

    /// One user through `step`, as a run of one: recorded, and its outcome a line.
    private func testCall(
        _ step: any MigrationStep, identifier: String, column: String, _ test: TestContext, into report: inout PreflightReport
    ) async {
        let (ledger, projection, session, credentials, logger) = (test.ledger, test.projection, test.session, test.credentials, test.logger)
        let name = column == "sub" ? "test user" : "test transfer"
        do {
            try RunGuards(identity: test.identity, window: test.window).check(
                step: step, teamID: credentials.teamID, clientID: credentials.clientID, now: .now(), force: false)
            let users = try UserList(
                bytes: Array("\(column)\n\(CSVField.quoted(identifier))\n".utf8),
                path: "preflight --\(column == "sub" ? "test-user" : "test-transfer-sub")", keyColumn: column)
            var options = MigrationRun.Options()
            options.concurrency = 1
            options.breaker = nil
            let run = MigrationRun(ledger: ledger, projection: projection, step: step, users: users, options: options, logger: logger)
            let summary = try await run.run(client: session.client, credentials: credentials, retryPolicy: RetryPolicy(maximumAttempts: 2))
            if summary.succeeded + summary.alreadyDone + summary.doneBySignIn == 1 {
                report.add(
                    name, .passed,
                    "\(identifier): Apple answered (\(summary.alreadyDone == 1 ? "done before; nothing called" : "recorded as run \(summary.runID ?? "")"))"
                )
            } else if let stop = summary.stoppedBy {
                report.add(name, .refused, "\(identifier): \(stop.message)")
            } else {
                let classes = summary.failuresByClass.keys.sorted().joined(separator: ", ")
                report.add(
                    name, .refused,
                    "\(identifier): Apple refused (\(classes.isEmpty ? "not attempted" : classes)); see `\(ShellWord.handover("query user \(ShellWord.quoted(identifier))", ledger: ledgerDirectory))`"
                )
            }
        } catch {
            report.add(name, .failed, "\(identifier): \(ErrorText.describing(error))")
        }
    }
}
