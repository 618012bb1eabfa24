import AppleID
import Basics
import Foundation
import Ledger
import LogEngine
import Logging
import Projections

/// A whole `generate` or `exchange` as the command line asks for it: read and check the
/// input, open the ledger, apply the guards, run, write the output. Used by the CLI, the
/// demo, the bench and the tests alike.
public struct MigrationJob: Sendable {
    /// Which side of the transfer.
    public enum Kind: Sendable {
        /// Team A: generate transfer identifiers for `target`.
        case generate(target: String)
        /// Team B: exchange transfer identifiers.
        case exchange

        var keyColumn: String {
            switch self {
            case .generate: return "sub"
            case .exchange: return "transfer_sub"
            }
        }

        /// The ledger the run belongs on: the sender's for `generate`, the recipient's for `exchange`.
        var role: RoleRequirement {
            switch self {
            case .generate: return .command("generate", of: .sender)
            case .exchange: return .command("exchange", of: .recipient)
            }
        }
    }

    public var kind: Kind
    public var ledgerDirectory: String
    /// How the ledger is opened (its role is the run's, whatever these say).
    public var ledgerOptions = Ledger.Options()
    public var inputPath: String
    public var credentials: AppleCredentials
    public var endpoints: AppleEndpoints
    public var options = MigrationRun.Options()
    /// Call Apple even though the recorded window has closed.
    public var force = false
    public var retryPolicy = RetryPolicy()
    public var clientSecretLifetime = ClientSecretSigner.defaultLifetime
    /// When the access token is renewed; the default suits Apple's hour-long tokens.
    public var tokenRenewal = TokenRenewal()
    public var requestTimeout: Double = 30
    /// For an exchange of a signed handoff package (a directory as `inputPath`): the sender's
    /// pinned verifier key, required then and refused with a bare CSV.
    public var senderKey: VerifierKey?
    /// Where to write the receipt for the sender; by default `receipt-<sender team>-NNNN` beside the output file.
    public var receiptPath: String?

    public init(kind: Kind, ledgerDirectory: String, inputPath: String, credentials: AppleCredentials, endpoints: AppleEndpoints) {
        self.kind = kind
        self.ledgerDirectory = ledgerDirectory
        self.inputPath = inputPath
        self.credentials = credentials
        self.endpoints = endpoints
    }

    /// Runs the job. Throws ``InputProblems`` for a bad input file and ``RunRefused`` when a
    /// guard refuses, both before anything is recorded or any call is made, and a
    /// ``HandoffRefusal`` (recorded as "handoff refused", nothing called) for a package that
    /// fails a check, its rows' problems included.
    public func execute(logger: Logger, warn: (String) -> Void = { _ in }) async throws -> RunSummary {
        let isPackage = HandoffPackage.isPackage(inputPath)
        switch kind {
        case .generate where isPackage || senderKey != nil:
            throw RunRefused("generate reads a CSV of users; handoff packages and --sender-key belong to exchange")
        case .exchange where isPackage && senderKey == nil:
            throw RunRefused("\(inputPath) is a signed handoff package: pass the sender's verifier key with --sender-key FILE to check it")
        case .exchange where !isPackage && senderKey != nil:
            throw RunRefused("--sender-key checks a signed handoff package, but \(inputPath) is not one (a package is a directory)")
        default: break
        }
        // A bare CSV's problems are found before the ledger is opened; a package's rows are read once it is verified.
        let bareList = isPackage ? nil : try UserList(path: inputPath, keyColumn: kind.keyColumn)
        let projection = UserProjection()
        var open = ledgerOptions
        open.role = kind.role
        let ledger = try Ledger.open(at: ledgerDirectory, folders: [projection], options: open)
        defer { ledger.close() }
        let step: any MigrationStep =
            switch kind {
            case .generate(let target): TransferIDGeneration(targetTeam: target)
            case .exchange: TransferIDExchange(keyStore: try ledger.sealer.requireKeyStore())
            }
        let window = try projection.read(ledger) { snapshot, _ in try snapshot.window() }
        try RunGuards(identity: ledger.identity(), window: window)
            .check(step: step, teamID: credentials.teamID, clientID: credentials.clientID, now: .now(), force: force)
        if window == nil, case .exchange = kind {
            warn(
                "no transfer date is recorded in this ledger, so the 60-day deadline cannot be checked; record it with `\(ShellWord.handover("window", ledger: ledger.directory, "--accepted-at YYYY-MM-DD"))`"
            )
        }
        // A secret that cannot be built fails here, before anything is recorded.
        _ = try await ClientSecretSigner(credentials: credentials).make(lifetime: clientSecretLifetime)
        var options = self.options
        var receipt: String?
        let users: UserList
        if let senderKey, isPackage {
            let acceptance = HandoffAcceptance(ledger: ledger, package: HandoffPackage(path: inputPath), senderKey: senderKey)
            let verified: VerifiedHandoff
            do {
                verified = options.dryRun ? try await acceptance.accept(record: false) : try await acceptance.receive().verified
            } catch var refusal as HandoffRefusal {
                refusal.subject = .packageBeforeExchange
                throw refusal
            }
            let manifest = verified.manifest
            options.handoff = .signed(
                package: manifest.package, senderTeam: manifest.senderTeam, manifestSHA256: verified.manifestSHA256,
                receivedBefore: verified.wasReceivedBefore)
            if !options.dryRun {
                let path =
                    receiptPath
                    ?? MigrationJob.defaultReceiptPath(
                        beside: options.outputPath ?? inputPath, sender: manifest.senderTeam, package: manifest.package)
                try acceptance.writeReceipt(for: verified, to: path)
                receipt = path
            }
            users = try verified.rows.userList(input: inputPath)
        } else if let bareList {
            if case .exchange = kind {
                options.handoff = .unsigned
                // The list's users exist on this side before any call, as a package's do.
                if !options.dryRun { _ = try await HandoffRows(unsigned: bareList).record(in: ledger) }
            }
            users = bareList
        } else {
            preconditionFailure("a package without a sender key was refused above")
        }
        for warning in users.warnings { warn(warning) }
        let run = MigrationRun(ledger: ledger, projection: projection, step: step, users: users, options: options, logger: logger)
        let client = AppleIDClient(
            endpoints: endpoints, maximumConnections: options.concurrency, requestTimeout: .milliseconds(Int64(requestTimeout * 1000)))
        do {
            let summary = try await run.run(
                client: client, credentials: credentials, retryPolicy: retryPolicy, clientSecretLifetime: clientSecretLifetime,
                tokenRenewal: tokenRenewal)
            try await client.shutdown()
            var done = summary
            done.receiptPath = receipt
            return done
        } catch {
            // The run's own error is what is reported; a client that fails to shut down too adds nothing.
            try? await client.shutdown()
            throw error
        }
    }

    /// `receipt-<sender team>-NNNN` in the directory of `file` (beside it).
    public static func defaultReceiptPath(beside file: String, sender: String, package: Int) -> String {
        let name =
            "receipt-" + String(sender.unicodeScalars.filter { $0.properties.isAlphabetic || ("0"..."9").contains($0) })
            + String(format: "-%04d", package)
        return URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(name).path
    }
}
