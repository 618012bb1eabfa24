import ArgumentParser
import Foundation
import Ledger
import Migration
import Projections

/// `handover-lab handoff-package`: team A's ledger of N generated transfer identifiers and its
/// first signed handoff package of them, with A's verifier key: what `tools/bench --handoff`
/// receives.
struct HandoffPackageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "handoff-package", abstract: "Write team A's ledger of N generated users and its signed handoff package.")

    @Option var sender: String
    @Option(help: "The package directory to write.") var out: String
    @Option(help: "Where to write team A's verifier key.") var key: String
    @Option(help: "Users handed over.") var users: Int

    func run() async throws {
        let start = Date()
        var options = Ledger.Options()
        options.mapSize = 1 << 34
        let a = try await Ledger.create(at: sender, LedgerCreated(teamID: "AAAA111111", clientIDs: ["com.example.app"], role: .sender, ledgerID: "bench-sender"),
                                        folders: [UserProjection()], options: options)
        defer { a.close() }
        for first in stride(from: 0, to: users, by: 4_096) {
            _ = try await a.append(contentsOf: (first..<min(first + 4_096, users)).map { i in
                EventDraft(.transferIDGenerated(TransferIDGenerated(targetTeam: "BBBB222222")),
                           identifiers: Identifiers(accountID: "acct-\(i)", senderSub: "000\(i).sender", transferSub: HandoffPairCommand.transferSub(i)),
                           idempotencyKey: "generate:BBBB222222:000\(i).sender")
            })
        }
        guard let issued = try await HandoffIssuer(ledger: a).issue(target: "BBBB222222", into: out) else { throw ValidationError("nothing to hand over") }
        try Data((try a.verifierKey().line + "\n").utf8).write(to: URL(fileURLWithPath: key))
        print("{\"rows\":\(issued.rowCount),\"seconds\":\(String(format: "%.1f", Date().timeIntervalSince(start)))}")
    }
}
