import AppleID
import ArgumentParser
import Basics
import Foundation
import Intake
import Ledger
import LogEngine
import Logging
import NotificationServer
import Witnessing

/// `handover serve`: receive Apple's notifications and the app backend's sign-in reports.
struct ServeCommand: AsyncParsableCommand, EitherTeamsCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Receive Apple's server-to-server notifications and sign-in reports over HTTPS; record each verified, once.",
        discussion: """
            POST /apple/notifications   Apple's notifications (point the app's notification endpoint here)
            POST /apple/sign-ins        {"identity_token": "...", "nonce": "..."} with Authorization: Bearer <secret>
            GET  /healthz, GET /metrics (Prometheus text)
            Plain HTTP is allowed only on a loopback address or with --insecure-http. SIGTERM finishes requests in flight, then exits.
            """, exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions
    @OptionGroup var keyOptions: KeySetOptions

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8443

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("PEM certificate chain for TLS (1.2 or later).", valueName: "file"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("PEM private key for --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Flag(name: .customLong("insecure-http"), help: "Allow plain HTTP on a non-loopback address (only behind a proxy that terminates TLS).")
    var insecureHTTP = false

    @Option(
        name: .customLong("sign-in-secret-file"),
        help: ArgumentHelp("Bearer secret for POST /apple/sign-ins (default: $HANDOVER_SIGN_IN_SECRET, then the one set at init).", valueName: "file")
    )
    var signInSecretFile: String?

    @Option(
        name: .customLong("rejection-budget"),
        help: "Refused deliveries recorded one by one per source address and minute; beyond it, 429 and one summary event per source and minute.")
    var rejectionBudget = 60

    @Option(
        name: .customLong("trusted-proxy"),
        help: ArgumentHelp("IP address of the proxy in front: from it, the client address is read from X-Forwarded-For.", valueName: "ip"))
    var trustedProxy: String?

    @Option(
        name: .customLong("witness-log"),
        help: ArgumentHelp(
            "Witness this log: the verifier key file of its checkpoints (`handover checkpoint --public-key` on its ledger). POST /witness/add-checkpoint then cosigns its checkpoints with this ledger's key; repeat for several logs.",
            valueName: "file"))
    var witnessLogs: [String] = []

    @Option(
        help: ArgumentHelp(
            "Serve this tiles directory (`handover tiles --out`) read-only at GET /tiles/: the checkpoint, the tiles, and the entry bundles only with --tiles-read-secret-file.",
            valueName: "dir"))
    var tiles: String?

    @Option(
        name: .customLong("tiles-read-secret-file"),
        help: ArgumentHelp("Bearer secret for GET /tiles/tile/entries/...: the entry bundles hold every event as logged.", valueName: "file"))
    var tilesReadSecretFile: String?

    func validate() throws {
        if tilesReadSecretFile != nil, tiles == nil { throw ValidationError("--tiles-read-secret-file goes with --tiles") }
    }

    func run() async throws {
        var configuration = try ServeConfiguration(
            host: host, port: port, tlsCertificate: tlsCert, tlsKey: tlsKey, insecureHTTP: insecureHTTP,
            rejectionBudget: rejectionBudget, trustedProxy: trustedProxy)
        try configuration.checkTLSFiles()
        configuration.signInSecret = try signInSecret()
        let (ledger, projection) = try ledgerOptions.open(.readWrite, for: self)
        defer { ledger.close() }
        var logger = Logger(label: "handover.serve")
        logger.logLevel = .notice
        let intake = try AppleIntake(ledger: ledger, projection: projection, keys: keyOptions.keySet(), logger: logger)
        let tileServing = try tiles.map {
            TileServing(directory: $0, readSecret: try tilesReadSecretFile.map { try BearerSecret.load(file: $0, for: .tilesRead) })
        }
        let server = HandoverServer(
            intake: intake, configuration: configuration, witness: try witness(ledger, logger: logger), tiles: tileServing, logger: logger)
        let refused = server.refusedRoutes
        let roleNote =
            refused.isEmpty
            ? nil
            : "note: \(RoleRequirement.describe(intake.settings, at: ledgerOptions.directory)): "
                + refused.map(\.description).joined(separator: ", ") + " are the recipient team's and answer 403 here"
        if refused.isEmpty, configuration.signInSecret == nil {
            Console.error("warning: no sign-in secret is set, so POST /apple/sign-ins answers 401; set one with --sign-in-secret-file")
        }
        let keys = intake.verifier.keys
        let scheme = configuration.usesTLS ? "https" : "http"
        let host = configuration.host
        let directory = ledgerOptions.directory
        let clients = intake.settings.clientIDs.joined(separator: ", ")
        try await server.run { port in
            // Written unbuffered: scripts and tests read the port from this line.
            Console.now("Listening on \(scheme)://\(host):\(port) for \(clients), recording into \(directory); Apple's keys from \(keys.origin)")
            if let tiles = server.tiles {
                Console.now(
                    "Serving the tiles in \(tiles.directory) at GET /tiles/" + (tiles.readSecret == nil ? "" : ", entry bundles with the read secret")
                )
            }
            if let witness = server.witness {
                Console.now("Witnessing \(witness.logNames.joined(separator: ", ")) at POST /witness/add-checkpoint as \(witness.verifierKey)")
            }
            if let roleNote { Console.error(roleNote) }
            // Fetched once now, so that keys out of reach are said at the start, not found at
            // Apple's first delivery; the server answers meanwhile.
            Task {
                do { try await keys.refresh() } catch {
                    Console.error(
                        "warning: Apple's keys cannot be fetched now (\(error)); notifications and sign-ins are answered 503, and Apple delivers again, until they can. Check --apple-base-url, --jwks-url or $HANDOVER_APPLE_BASE_URL"
                    )
                }
            }
        }
        let m = server.metrics
        let suppressed = m.suppressed(route: "notifications") + m.suppressed(route: "sign-ins")
        Console.out(
            "Stopped: recorded \(counted(m.events(.notificationReceived), "notification")), \(counted(m.events(.signInVerified), "sign-in")); rejected \(m.events(.notificationRejected) + m.events(.signInRejected))"
                + (suppressed > 0 ? ", and \(suppressed) more over the rejection budget (answered 429, summed up per source and minute)." : "."))
    }

    /// The witness of the logs named by --witness-log, cosigning with this ledger's key; nil
    /// without any.
    private func witness(_ ledger: Ledger, logger: Logger) throws -> CheckpointWitness? {
        guard !witnessLogs.isEmpty else { return nil }
        let logs = try witnessLogs.map { path in try CommandLineFileError.reading(path) { try VerifierKey.read(from: path) } }
        guard FileManager.default.fileExists(atPath: CheckpointKey.path(in: ledger.directory)) else {
            throw CLIExit.usage("--witness-log: \(ledger.directory) holds no checkpoint key to cosign with (a copy made without keys cannot witness)")
        }
        return try CheckpointWitness(ledger: ledger, key: try CheckpointKey.load(from: ledger.directory), logs: logs, logger: logger)
    }

    private func signInSecret() throws -> BearerSecret? {
        if let signInSecretFile { return try BearerSecret.load(file: signInSecretFile, for: .signIn) }
        if let env = ProcessInfo.processInfo.environment["HANDOVER_SIGN_IN_SECRET"], !env.isEmpty {
            return try BearerSecret(secret: env, for: .signIn)
        }
        return try BearerSecret.storedSignInSecret(in: ledgerOptions.directory)
    }
}
