import AppleID
import AppleSimulator
import Basics
import Foundation
import Ledger
import Logging
import Migration
import Projections
import TestSupport

/// A temporary directory holding the Apple stand-in (running on loopback in this process)
/// with teams A and B registered, and helpers to make ledgers, input files and jobs.
final class AppleFixture: Sendable {
    static let senderTeam = "AAAA111111"
    static let recipientTeam = "BBBB222222"
    static let clientID = "com.example.app"

    let directory: TemporaryDirectory
    let path: String
    let apple: SimulatorDirectory
    let simulator: RunningSimulator
    let sender: AppleCredentials
    let recipient: AppleCredentials
    let logger: Logger

    /// The stand-in's rules with `fraction` of the users (by a hash of their identifier) having revoked consent.
    static func revoking(_ fraction: Double) -> SimulatedApple.Rules {
        var rules = SimulatedApple.Rules()
        rules.revokedFraction = fraction
        return rules
    }

    /// Starts a stand-in with `rules` and `faults`; `setUp` runs before it reads its directory.
    static func start(
        rules: SimulatedApple.Rules = .init(), faults: FaultInjection = .init(), in dir: TemporaryDirectory,
        setUp: (SimulatorDirectory) throws -> Void = { _ in }
    ) async throws -> AppleFixture {
        let apple = try SimulatorDirectory(path: dir.sub("apple"))
        let a = try apple.registerTeam(senderTeam, clientIDs: [clientID], keyID: "KEYA111111")
        let b = try apple.registerTeam(recipientTeam, clientIDs: [clientID], keyID: "KEYB222222")
        try setUp(apple)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let simulator = try await RunningSimulator(SimulatorServer(directory: apple, rules: rules, faults: faults, logger: logger))
        return AppleFixture(
            directory: dir, apple: apple, simulator: simulator, logger: logger,
            sender: try AppleCredentials(teamID: senderTeam, clientID: clientID, keyID: a.keyID, privateKeyPath: a.privateKeyPath),
            recipient: try AppleCredentials(teamID: recipientTeam, clientID: clientID, keyID: b.keyID, privateKeyPath: b.privateKeyPath))
    }

    private init(
        directory: TemporaryDirectory, apple: SimulatorDirectory, simulator: RunningSimulator, logger: Logger, sender: AppleCredentials,
        recipient: AppleCredentials
    ) {
        // Held for as long as the fixture: a directory made for it alone (`in: TemporaryDirectory()`)
        // is removed only once the fixture is gone, not while the stand-in still uses it.
        self.directory = directory
        self.path = directory.path
        self.apple = apple
        self.simulator = simulator
        self.logger = logger
        self.sender = sender
        self.recipient = recipient
    }

    var endpoints: AppleEndpoints { AppleEndpoints(baseURL: simulator.baseURL) }

    /// A new ledger for `role` (team A's or B's), optionally with a transfer date.
    func ledger(_ role: LedgerCreated.Role, acceptedAt: Timestamp? = nil) async throws -> String {
        let team = role == .sender ? AppleFixture.senderTeam : AppleFixture.recipientTeam
        let dir = path + "/ledger-\(role.rawValue)"
        let projection = UserProjection()
        let ledger = try await Ledger.create(
            at: dir, LedgerCreated(teamID: team, clientIDs: [AppleFixture.clientID], role: role, ledgerID: UUID().uuidString), folders: [projection])
        if let acceptedAt { try await WindowRecorder(ledger: ledger, projection: projection).record(acceptedAt: acceptedAt, correcting: false) }
        ledger.close()
        return dir
    }

    /// Team A's `sub` of user `i`.
    static func sub(_ i: Int) -> String { "000\(100 + i % 900).\(String(format: "%032x", i)).0001" }

    /// A users CSV of `count` users (`sub`, `account_id` acct-i).
    func usersFile(_ count: Int, name: String = "users.csv") throws -> String {
        let text = "sub,account_id\n" + (0..<count).map { "\(AppleFixture.sub($0)),acct-\($0)\n" }.joined()
        return try write(text, name)
    }

    /// Writes `text` to a file in the fixture's directory; returns its path.
    func write(_ text: String, _ name: String) throws -> String {
        let file = path + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// A job with fast retries for tests.
    func job(_ kind: MigrationJob.Kind, ledger: String, input: String, output: String, credentials: AppleCredentials? = nil) -> MigrationJob {
        let credentials = credentials ?? (kind.isGenerate ? sender : recipient)
        var job = MigrationJob(kind: kind, ledgerDirectory: ledger, inputPath: input, credentials: credentials, endpoints: endpoints)
        job.options.outputPath = output
        job.retryPolicy = RetryPolicy(maximumAttempts: 10, baseDelay: 0.01, maximumDelay: 0.2)
        return job
    }

    /// Reads a CSV this package wrote: header and rows, fields by column name.
    static func readCSV(_ path: String) throws -> CSVTable {
        try CSVTable(path: path)
    }

    /// Events of `type` in the ledger at `path`.
    static func events(_ type: EventType, in path: String) throws -> [RecordedEvent] {
        let ledger = try Ledger.open(at: path)
        defer { ledger.close() }
        return try ledger.read { view in try view.sequences(of: type).compactMap { try view.event($0) } }
    }
}

extension MigrationJob.Kind {
    var isGenerate: Bool { if case .generate = self { return true } else { return false } }
}
