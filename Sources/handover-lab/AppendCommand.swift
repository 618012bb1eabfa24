import ArgumentParser
import Foundation
import Ledger
import Projections

/// Appends synthetic events and prints each acknowledged one, for crash and concurrency tests.
struct AppendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "append",
        abstract: "Append events i = 0..<count (idempotency key PREFIX:i) and print `ack i seq` once each is durable."
    )

    @Option var ledger: String
    @Option var count: Int
    @Option var prefix: String
    @Option(help: "Concurrent appending tasks.") var tasks = 8
    @Option(help: "Initial map size in bytes when the ledger is created here.") var mapSize = 64 << 20
    @Flag(help: "Create the ledger first.") var create = false

    func run() async throws {
        var options = Ledger.Options()
        options.mapSize = mapSize
        let projection = UserProjection()
        let ledger: Ledger
        if create {
            ledger = try await Ledger.create(
                at: self.ledger, LedgerCreated(teamID: "BBBB222222", clientIDs: ["com.example.lab"], role: .recipient, ledgerID: UUID().uuidString),
                folders: [projection], options: options)
        } else {
            ledger = try Ledger.open(at: self.ledger, folders: [projection], options: options)
        }
        let key = try await ledger.sealer.requireKeyStore().dataKey(for: Identifier(.recipientSub, "lab-shared-key"))
        let prefix = self.prefix
        let total = count
        let lanes = tasks
        let printLock = NSLock()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    for i in stride(from: lane, to: total, by: lanes) {
                        let draft = try SyntheticEvents.exchange(i, prefix: prefix) { text, _ in try Sealer.seal(text, keyID: key.id, key: key.key) }
                        let outcome = try await ledger.append(draft)
                        // One write(2) per line, so a kill never leaves a torn acknowledgement.
                        printLock.withLock { FileHandle.standardOutput.write(Data("ack \(i) \(outcome.sequence)\n".utf8)) }
                    }
                }
            }
            try await group.waitForAll()
        }
        ledger.close()
    }
}
