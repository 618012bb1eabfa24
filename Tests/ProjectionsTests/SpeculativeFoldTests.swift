import Foundation
import LMDB
import Synchronization
import TestSupport
import Testing

@testable import Ledger
@testable import Projections

/// The projections folded ahead of the write transaction, beside the commit before: what the
/// batches in flight changed is read back by the next, and a batch prepared over a state that
/// changed before its commit is folded again inside the transaction.
@Suite("Projections folded ahead of the transaction")
struct FoldAheadTests {
    let dir = TemporaryDirectory()

    private func audit(_ ledger: Ledger, _ projection: UserProjection, _ name: String) throws -> ProjectionAudit.Mismatch? {
        try ProjectionAudit.run(ledger: ledger, projection: projection, scratch: dir.sub(name))
    }

    private static func exchanged(_ transferSub: String, _ sub: String) -> EventDraft {
        EventDraft(
            .transferIDExchanged(TransferIDExchanged(email: nil, isPrivateEmail: true)),
            identifiers: Identifiers(transferSub: transferSub, recipientSub: sub))
    }

    private static func failed(_ transferSub: String, _ n: Int) -> EventDraft {
        EventDraft(
            .transferIDExchangeFailed(TransferIDExchangeFailed(failure: CallFailure(kind: .timeout, message: "attempt \(n)"))),
            identifiers: Identifiers(accountID: "acct-" + transferSub, transferSub: transferSub))
    }

    private static func notified(_ sub: String, _ n: Int) -> EventDraft {
        let t = Timestamp(microseconds: Timestamp(rfc3339: "2026-11-20T10:00:00Z")!.microseconds + Int64(n) * 1_000_000)
        return EventDraft(
            .notificationReceived(NotificationReceived(kind: n % 2 == 0 ? .emailEnabled : .emailDisabled, eventTime: t)),
            identifiers: Identifiers(recipientSub: sub, jti: "jti-\(sub)-\(n)"), occurredAt: t, idempotencyKey: "notification:jti-\(sub)-\(n)")
    }

    @Test("16 tasks appending about the same 40 users at once (failures, exchanges, notifications, merges): the projections agree with the log")
    func sameUsersAtOnce() async throws {
        let projection = UserProjection()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity(), folders: [projection])
        defer { ledger.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    var generator = SystemRandomNumberGenerator()
                    for n in 0..<60 {
                        let user = Int.random(in: 0..<40, using: &generator)
                        let drafts: [EventDraft] =
                            switch (task + n) % 4 {
                            case 0: [Self.failed("t\(user)", n)]
                            case 1: [Self.exchanged("t\(user)", "r\(user)")]
                            case 2: [Self.notified("r\(user)", task * 100 + n), Self.failed("t\(user)", n)]
                            // A recipient sub that first arrives alone, then is joined to a user: a merge.
                            default: [Self.notified("r\(user)-\(task)", n), Self.exchanged("t\(user)", "r\(user)-\(task)")]
                            }
                        _ = try await ledger.append(contentsOf: drafts)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try ledger.verify().isIntact)
        #expect(try audit(ledger, projection, "audit") == nil)
        let users = try projection.read(ledger) { snapshot, _ in try snapshot.allUsers() }
        #expect(Set(users.compactMap(\.transferSub)).count == users.filter { $0.transferSub != nil }.count, "one user per transfer_sub")
        #expect(users.filter { $0.transferSub != nil }.count <= 40)
    }

    @Test("a rebuild switches the projections while a batch is prepared: the batch is folded again in its transaction, and the next ones ahead again")
    func rebuildWhilePrepared() async throws {
        let projection = UserProjection()
        let gate = PrepareGate()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity(), folders: [projection, gate])
        defer { ledger.close() }
        for i in 0..<20 { _ = try await ledger.append(Self.failed("t\(i)", 0)) }
        let generation = try ledger.read { try projection.databases(in: $0.transaction).generation }
        gate.close()
        let held = Task { try await ledger.append(Self.exchanged("t3", "r3")) }
        await gate.waitUntilReached()
        // The batch is prepared over this generation; the rebuild folds the log into the other
        // one and switches to it before the batch commits.
        try projection.rebuild(ledger)
        #expect(try ledger.read { try projection.databases(in: $0.transaction).generation } == generation + 1)
        gate.open()
        guard case .recorded(let sequence, _) = try await held.value else {
            Issue.record("the held append was not recorded")
            return
        }
        let u = try #require(try projection.read(ledger) { snapshot, _ in try snapshot.user(matching: "r3") })
        #expect(u.status == .migrated && u.lastSequence == sequence && u.attempts == 2)
        // The batches after it are prepared ahead again, over the new generation.
        for i in 20..<40 { _ = try await ledger.append(Self.exchanged("t\(i % 25)", "r\(i % 25)")) }
        #expect(gate.foldedAhead.load(ordering: .relaxed) > 20)
        #expect(try audit(ledger, projection, "audit") == nil)
        #expect(try projection.read(ledger) { snapshot, _ in try snapshot.user(matching: "t24")?.status } == .migrated)
    }

    @Test("two processes appending 3,000 events each at once, each preparing batches over a head the other moves: the projections agree with the log")
    func twoProcesses() async throws {
        let path = dir.sub("l")
        let projection = UserProjection()
        try await Ledger.create(at: path, testIdentity(), folders: [projection]).close()
        async let a = runProductAwaiting("handover-lab", ["append", "--ledger", path, "--count", "3000", "--prefix", "a", "--tasks", "32"])
        async let b = runProductAwaiting("handover-lab", ["append", "--ledger", path, "--count", "3000", "--prefix", "b", "--tasks", "32"])
        let (ra, rb) = try await (a, b)
        #expect(ra.status == 0 && rb.status == 0, "\(ra.err)\(rb.err)")
        let ledger = try Ledger.open(at: path, folders: [projection])
        defer { ledger.close() }
        #expect(ledger.upgrades.isEmpty, "both processes folded every event they appended: \(ledger.upgrades)")
        #expect(try ledger.verify().eventCount == 6_001)
        #expect(try audit(ledger, projection, "audit") == nil)
        #expect(try projection.read(ledger) { snapshot, _ in try snapshot.allUsers().count } == 6_000)
    }
}

/// A folder that folds nothing, ahead of the transaction; while closed, its ahead fold waits
/// (outside any write transaction) until opened.
private final class PrepareGate: LedgerFolder, SpeculativeFold, @unchecked Sendable {
    private let condition = NSCondition()
    private var closed = false
    private var reached = false
    /// Batches it was handed ahead of their transaction.
    let foldedAhead = Atomic<Int>(0)

    func close() {
        condition.withLock {
            closed = true
            reached = false
        }
    }
    func open() {
        condition.withLock {
            closed = false
            condition.broadcast()
        }
    }

    func waitUntilReached() async {
        while !condition.withLock({ reached }) { try? await Task.sleep(for: .milliseconds(5)) }
    }

    func attach(to environment: Environment) throws {}
    /// Never behind: it holds nothing.
    func checkpoint(in transaction: ReadTransaction) throws -> UInt64 {
        try LogView(transaction, schema: LedgerSchema.open(in: transaction, create: false)).head().sequence
    }
    func fold(_ events: [RecordedEvent], in transaction: WriteTransaction) throws {}
    func makeSpeculativeFold() -> (any SpeculativeFold)? { self }

    func fold(
        _ events: [RecordedEvent], after base: UInt64, reading transaction: ReadTransaction, into writes: inout WriteBatch
    ) throws
        -> (@Sendable (ReadTransaction) throws -> Bool)?
    {
        foldedAhead.add(1, ordering: .relaxed)
        condition.withLock {
            reached = true
            while closed { condition.wait() }
        }
        return { _ in true }
    }

    func forget(through sequence: UInt64) {}
}
