import Basics
import Foundation
import LMDB
import TestSupport
import Testing

@testable import Ledger
@testable import Projections

/// The ledger's one writer: every batch appended and folded in one transaction, whatever other
/// tasks, other processes and a rebuild do meanwhile.
@Suite("one writer: appends and folds in one transaction")
struct GroupCommitTests {
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

    @Test(
        "a rebuild switches the projections between two appends: the next append folds into the new generation, and the projections agree with the log"
    )
    func rebuildBetweenAppends() async throws {
        let projection = UserProjection()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity(), folders: [projection])
        defer { ledger.close() }
        for i in 0..<20 { _ = try await ledger.append(Self.failed("t\(i)", 0)) }
        let generation = try ledger.read { try projection.databases(in: $0.transaction).generation }
        try projection.rebuild(ledger)
        #expect(try ledger.read { try projection.databases(in: $0.transaction).generation } == generation + 1)
        guard case .recorded(let sequence, _) = try await ledger.append(Self.exchanged("t3", "r3")) else {
            Issue.record("the append was not recorded")
            return
        }
        let u = try #require(try projection.read(ledger) { snapshot, _ in try snapshot.user(matching: "r3") })
        #expect(u.status == .migrated && u.lastSequence == sequence && u.attempts == 2)
        for i in 20..<40 { _ = try await ledger.append(Self.exchanged("t\(i % 25)", "r\(i % 25)")) }
        #expect(try audit(ledger, projection, "audit") == nil)
        #expect(try projection.read(ledger) { snapshot, _ in try snapshot.user(matching: "t24")?.status } == .migrated)
    }

    @Test("two processes appending 3,000 events each at once: the projections agree with the log")
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

    @Test(
        "two processes appending while a third runs projections rebuild (2 rounds; 10 at full size): every acknowledged event there once, none lost or doubled, verify --deep passes"
    )
    func appendsDuringRebuild() async throws {
        let path = dir.sub("l")
        // A log long enough that the rebuild is still folding when the appenders write.
        let seeded = try runProduct("handover-lab", ["append", "--ledger", path, "--count", "20000", "--prefix", "seed", "--create"])
        try #require(seeded.status == 0, "\(seeded.err)")
        var expected = 20_001
        for round in 0..<TestSize.pick(quick: 2, full: 10) {
            let count = 2_000
            // The appenders start once the rebuild's fold is under way (its scratch directory
            // exists), so they append while it folds, before it switches the projections.
            let scratch = dir.sub("scratch-\(round)")
            let rebuilding = try RunningProduct("handover", ["projections", "rebuild", "--ledger", path, "--scratch", scratch])
            let deadline = Date().addingTimeInterval(120)
            while !FileManager.default.fileExists(atPath: scratch), rebuilding.isRunning, Date() < deadline { usleep(500) }
            let appenders = try ["a\(round)", "b\(round)"].map { prefix in
                (
                    prefix,
                    try RunningProduct("handover-lab", ["append", "--ledger", path, "--count", String(count), "--prefix", prefix, "--tasks", "16"])
                )
            }
            let rebuild = rebuilding.wait()
            #expect(rebuild.status == 0, "round \(round): \(rebuild.out)\(rebuild.err)")
            let ledger = try Ledger.open(at: path, options: Ledger.Options(access: .readOnly))
            defer { ledger.close() }
            for (prefix, appender) in appenders {
                let ended = appender.wait()
                #expect(ended.status == 0, "round \(round), \(prefix): \(ended.err)")
                // Each acknowledged event is the one its key names, and each key is there once.
                var acknowledged: [Int: UInt64] = [:]
                for line in ended.out.split(separator: "\n") {
                    let words = line.split(separator: " ")
                    guard words.count == 3, words[0] == "ack", let i = Int(words[1]), let sequence = UInt64(words[2]) else { continue }
                    acknowledged[i] = sequence
                }
                #expect(acknowledged.count == count, "round \(round), \(prefix): \(acknowledged.count) acknowledged")
                let wrong = try ledger.read { view in
                    try acknowledged.filter { i, sequence in
                        try view.sequence(forIdempotencyKey: "\(prefix):\(i)") != sequence
                            || view.event(sequence)?.identifiers.accountID != "\(prefix)-\(i)"
                    }
                }
                #expect(wrong.isEmpty, "round \(round), \(prefix): acknowledged events missing or elsewhere: \(wrong.prefix(3))")
            }
            expected += 2 * count
            #expect(try ledger.verify().eventCount == UInt64(expected), "round \(round): every key appended exactly once")
            let deep = try handover("verify", "--deep", "--ledger", path)
            #expect(deep.status == 0, "round \(round): \(deep.out)\(deep.err)")
        }
    }
}
