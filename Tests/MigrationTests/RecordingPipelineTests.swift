import AppleID
import Basics
import Foundation
import LMDB
import Ledger
import Migration
import Projections
import Synchronization
import TestSupport
import Testing

/// A worker calls Apple for its next user while the previous user's event is being made
/// durable, and no user counts as done before its event is.
@Suite("recording pipelined with the next call")
struct RecordingPipelineTests {
    let dir = TemporaryDirectory()

    @Test("with the ledger's commit held, one worker makes its next call but not a third, and reports nobody done until the commit")
    func nextCallWhileRecording() async throws {
        let fixture = try await AppleFixture.start(in: dir)
        let b = try await fixture.ledger(.recipient)
        let count = 5
        let handoff =
            "account_id,transfer_sub\n"
            + (try (0..<count).map { i in
                "acct-\(i),\(try fixture.simulator.server.apple.generate(teamID: AppleFixture.senderTeam, sub: AppleFixture.sub(i), target: AppleFixture.recipientTeam))\n"
            }.joined())
        let users = try UserList(path: try fixture.write(handoff, "handoff.csv"), keyColumn: "transfer_sub")

        let gate = CommitGate(holding: .transferIDExchanged)
        let projection = UserProjection()
        let ledger = try Ledger.open(at: b, folders: [projection, gate])
        defer { ledger.close() }
        let lines = Mutex<[String]>([])
        var options = MigrationRun.Options()
        options.concurrency = 1
        options.onProgress = { line in lines.withLock { $0.append(line) } }
        let run = MigrationRun(
            ledger: ledger, projection: projection, step: TransferIDExchange(keyStore: try ledger.sealer.requireKeyStore()),
            users: users, options: options, logger: fixture.logger)
        let client = AppleIDClient(endpoints: fixture.endpoints, maximumConnections: 1)
        let running = Task { try await run.run(client: client, credentials: fixture.recipient) }

        // The first user's event is held in its commit; the worker still calls Apple for the second user.
        let exchanges = { fixture.simulator.server.stats.snapshot["usermigrationinfo.200", default: 0] }
        // Each wait below ends on what it waits for; the deadline only keeps a broken build from
        // hanging the suite, and is long, since a busy machine can keep the run's tasks from
        // running for many seconds.
        let deadline = ContinuousClock.now + .seconds(600)
        while exchanges() < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        while gate.held < 1, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(gate.held == 1, "the first user's event is held in its commit")
        #expect(exchanges() == 2, "the second call was made while the first user's event was being recorded")
        // With its previous event still not durable, the worker makes no third call; and a
        // progress line drawn meanwhile counts nobody done.
        lines.withLock { $0 = [] }
        while lines.withLock({ $0.isEmpty }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(exchanges() == 2, "one event per worker in flight: no third call before the first event is durable")
        let drawn = lines.withLock { $0 }
        #expect(
            !drawn.isEmpty && drawn.allSatisfy { $0.hasPrefix("0/\(count) users") }, "nobody is reported done before their event is durable: \(drawn)"
        )

        gate.open()
        let summary = try await running.value
        try await client.shutdown()
        #expect(summary.succeeded == count && summary.failed == 0)
        #expect(exchanges() == count)
        let recorded = try ledger.read { try $0.sequences(of: .transferIDExchanged).count }
        #expect(recorded == count, "every user counted has its event in the ledger")
        await fixture.simulator.stop()
    }
}

/// A folder that holds the ledger's writer inside the commit of the first batch carrying an
/// event of one type, until opened: that event is not durable while the gate is shut.
private final class CommitGate: LedgerFolder {
    private struct State {
        var folded: UInt64 = 0
        var isOpen = false
        var held = 0
    }
    private let condition = NSCondition()
    private nonisolated(unsafe) var state = State()
    private let type: EventType

    init(holding type: EventType) { self.type = type }

    /// How many batches are waiting at the gate.
    var held: Int { condition.withLock { state.held } }

    /// Lets every held commit, and all later ones, go on.
    func open() {
        condition.withLock {
            state.isOpen = true
            condition.broadcast()
        }
    }

    func attach(to environment: Environment) throws {}
    func checkpoint(in transaction: ReadTransaction) throws -> UInt64 { condition.withLock { state.folded } }
    func fold(_ events: [RecordedEvent], in transaction: WriteTransaction) throws {
        condition.withLock {
            if events.contains(where: { $0.type == type }) {
                state.held += 1
                while !state.isOpen { condition.wait() }
                state.held -= 1
            }
            state.folded = events.last?.sequence ?? state.folded
        }
    }
}
