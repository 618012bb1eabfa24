import ArgumentParser
import Foundation
import Ledger
import Migration
import Projections

/// `handover-lab handoff-package`: team A's ledger of N generated transfer identifiers and its
/// first signed handoff package of them, with A's verifier key: what `tools/bench --handoff`
/// receives.
struct HandoffPackageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff-package", abstract: "Write team A's ledger of N generated users and its signed handoff package.")

    @Option var sender: String
    @Option(help: "The package directory to write.") var out: String
    @Option(help: "Where to write team A's verifier key.") var key: String
    @Option(help: "Users handed over.") var users: Int

    func run() async throws {
        let start = Date()
        var options = Ledger.Options()
        options.mapSize = 1 << 34
        let a = try await GeneratedSender.create(at: sender, users: users, clientID: "com.example.app", ledgerID: "bench-sender", options: options)
        defer { a.close() }
        guard let issued = try await HandoffIssuer(ledger: a).issue(target: "BBBB222222", into: out) else {
            throw ValidationError("nothing to hand over")
        }
        try Data((try a.verifierKey().line + "\n").utf8).write(to: URL(fileURLWithPath: key))
        print("{\"rows\":\(issued.rowCount),\"seconds\":\(String(format: "%.1f", Date().timeIntervalSince(start)))}")
    }
}
