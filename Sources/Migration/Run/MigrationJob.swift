import AppleID
import Foundation
import Ledger
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
    }

    public var kind: Kind
    public var ledgerDirectory: String
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

    public init(kind: Kind, ledgerDirectory: String, inputPath: String, credentials: AppleCredentials, endpoints: AppleEndpoints) {
        self.kind = kind
        self.ledgerDirectory = ledgerDirectory
        self.inputPath = inputPath
        self.credentials = credentials
        self.endpoints = endpoints
    }

    /// Runs the job. Throws ``InputProblems`` for a bad input file and ``RunRefused`` when a
    /// guard refuses, both before anything is recorded or any call is made.
    public func execute(logger: Logger, warn: (String) -> Void = { _ in }) async throws -> RunSummary {
        let users = try UserList(path: inputPath, keyColumn: kind.keyColumn)
        for warning in users.warnings { warn(warning) }
        let projection = UserProjection()
        let ledger = try Ledger.open(at: ledgerDirectory, folders: [projection])
        defer { ledger.close() }
        let step: any MigrationStep = switch kind {
        case .generate(let target): TransferIDGeneration(targetTeam: target)
        case .exchange: TransferIDExchange(keyStore: try ledger.sealer.requireKeyStore())
        }
        let window = try projection.read(ledger) { snapshot, _ in try snapshot.window() }
        try RunGuards(identity: ledger.identity(), window: window)
            .check(step: step, teamID: credentials.teamID, clientID: credentials.clientID, now: .now(), force: force)
        if window == nil, case .exchange = kind {
            warn("no transfer date is recorded in this ledger, so the 60-day deadline cannot be checked; record it with `handover window --accepted-at DATE`")
        }
        // A secret that cannot be built fails here, before anything is recorded.
        _ = try ClientSecretSigner(credentials: credentials).make(lifetime: clientSecretLifetime)
        let run = MigrationRun(ledger: ledger, projection: projection, step: step, users: users, options: options, logger: logger)
        let client = AppleIDClient(endpoints: endpoints, maximumConnections: options.concurrency, requestTimeout: .milliseconds(Int64(requestTimeout * 1000)))
        do {
            let summary = try await run.run(client: client, credentials: credentials, retryPolicy: retryPolicy, clientSecretLifetime: clientSecretLifetime,
                                            tokenRenewal: tokenRenewal)
            try await client.shutdown()
            return summary
        } catch {
            // The run's own error is what is reported; a client that fails to shut down too adds nothing.
            try? await client.shutdown()
            throw error
        }
    }
}
