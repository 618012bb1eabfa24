import AppleID
import AppleSimulator
import ArgumentParser
import Foundation
import Ledger
import Logging
import Migration
import Projections

/// `handover-lab bench-exchange`: a whole exchange run against the stand-in over loopback,
/// as a ratio to the bound that latency sets (concurrency ÷ latency).
struct ExchangeBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-exchange", abstract: "Measure exchange throughput against the Apple stand-in with injected latency.")

    @Option(help: "Users to exchange.") var users = 20_000
    @Option(name: .customLong("latency-ms"), help: "Latency the stand-in adds to every answer.") var latency = 20
    @Option(help: "Users in flight at once.") var concurrency = 64
    @Option(help: "Scratch directory (emptied first).") var directory = "/tmp/handover-bench-exchange"
    @Option(
        name: .customLong("outage"),
        help: ArgumentHelp(
            "An outage of the stand-in, as `handover simulator serve --outage` takes it (repeat).", valueName: "CALLS:SECONDS:ANSWER[:RETRY_AFTER]"))
    var outages: [String] = []

    func validate() throws {
        for outage in outages where SimulatedOutage(argument: outage) == nil {
            throw ValidationError("--outage \(outage): expected CALLS:SECONDS:ANSWER[:RETRY_AFTER], ANSWER 429, a 5xx status or drop")
        }
    }

    func run() async throws {
        // A bench's earlier directory, if any: there may be none.
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let clientID = "com.example.bench"
        let apple = try SimulatorDirectory(path: directory + "/apple")
        _ = try apple.registerTeam("AAAA111111", clientIDs: [clientID], keyID: "KEYA111111")
        let b = try apple.registerTeam("BBBB222222", clientIDs: [clientID], keyID: "KEYB222222")
        var faults = FaultInjection()
        faults.latencyMilliseconds = latency
        faults.outages = outages.compactMap(SimulatedOutage.init(argument:))
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        let server = try SimulatorServer(directory: apple, rules: .init(), faults: faults, logger: logger)
        let simulator = try await RunningSimulator(server)

        // Team A's handoff file, derived as the stand-in derives it.
        var handoff = "account_id,transfer_sub\n"
        for i in 0..<users {
            handoff +=
                "acct-\(i),\(try server.apple.generate(teamID: "AAAA111111", sub: "000\(i % 900).\(String(format: "%08x", i)).0001", target: "BBBB222222"))\n"
        }
        let handoffPath = directory + "/handoff.csv"
        try Data(handoff.utf8).write(to: URL(fileURLWithPath: handoffPath))
        let ledgerPath = directory + "/recipient"
        try await Ledger.create(
            at: ledgerPath, LedgerCreated(teamID: "BBBB222222", clientIDs: [clientID], role: .recipient, ledgerID: "bench"),
            folders: [UserProjection()]
        ).close()

        var job = MigrationJob(
            kind: .exchange, ledgerDirectory: ledgerPath, inputPath: handoffPath,
            credentials: try AppleCredentials(teamID: "BBBB222222", clientID: clientID, keyID: b.keyID, privateKeyPath: b.privateKeyPath),
            endpoints: AppleEndpoints(baseURL: simulator.baseURL))
        job.options.concurrency = concurrency
        job.options.outputPath = directory + "/exchanged.csv"
        let summary = try await job.execute(logger: logger)
        await simulator.stop()

        let ledger = try Ledger.open(at: ledgerPath)
        let recorded = try ledger.read { try $0.sequences(of: .transferIDExchanged).count }
        ledger.close()
        let bound = Double(concurrency) / (Double(latency) / 1000)
        let rate = Double(summary.succeeded) / summary.durationSeconds
        print("Exchange benchmark: \(users) users, concurrency \(concurrency), \(latency) ms injected latency, Apple stand-in over loopback")
        print(
            String(
                format: "exchange users/s (each durably recorded)   %9.0f   bound %6.0f   ratio %.2f   (target >= 0.80)", rate, bound, rate / bound))
        print(
            "  succeeded \(summary.succeeded), failed \(summary.failed), exchanged events in the ledger \(recorded), \(String(format: "%.2f", summary.durationSeconds)) s, output rows \(summary.outputRows)"
        )
        if let unavailable = summary.appleUnavailable {
            let calls = server.outages.calls
            print(
                "  Apple unavailable: \(unavailable.pauses) pauses, \(Duration.milliseconds(unavailable.pausedMilliseconds).spoken) waited, \(unavailable.callsRefused) calls refused; "
                    + "calls during each outage: "
                    + (0..<faults.outages.count).map { i in "\(calls.filter { $0.outage == i }.count)" }.joined(separator: ", "))
        }
        guard recorded == users, summary.succeeded == users else { throw ValidationError("not every user was exchanged and recorded") }
    }
}
