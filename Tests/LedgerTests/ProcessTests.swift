import Basics
import Foundation
import TestSupport
import Testing

@testable import Ledger

/// Tests across processes: LMDB's one writer, and crashes at random moments.
@Suite("Ledger across processes", .serialized)
struct ProcessTests {
    @Test("two processes appending 10,000 events each leave 20,000 dense events and a verifying chain")
    func twoWriters() async throws {
        let dir = TemporaryDirectory()
        let path = dir.sub("l")
        try await Ledger.create(at: path, testIdentity()).close()
        async let a = Task.detached { try runProduct("handover-lab", ["append", "--ledger", path, "--count", "10000", "--prefix", "a"]) }.value
        async let b = Task.detached { try runProduct("handover-lab", ["append", "--ledger", path, "--count", "10000", "--prefix", "b"]) }.value
        let (ra, rb) = try await (a, b)
        #expect(ra.status == 0, "\(ra.err)")
        #expect(rb.status == 0, "\(rb.err)")
        let ledger = try Ledger.open(at: path)
        defer { ledger.close() }
        let report = try ledger.verify()
        #expect(report.isIntact, "\(report.problem ?? "")")
        #expect(report.eventCount == 20_001)
        let acked = Set((ra.out + rb.out).split(separator: "\n").compactMap { Acknowledgement(String($0))?.sequence })
        #expect(acked.count == 20_000)
        #expect(acked == Set(2...20_001))
    }

    @Test(
        "killed with SIGKILL while appending (8 kills; 20 at full size): no acknowledged event lost, none duplicated, the chain verifies; each counted kill landed with the appender's events part-way on disk"
    )
    func crashLoop() async throws {
        let dir = TemporaryDirectory()
        let path = dir.sub("l")
        try await Ledger.create(at: path, testIdentity()).close()
        let total = 20_000
        var acknowledged: [Int: UInt64] = [:]
        let killsWanted = TestSize.pick(quick: 8, full: 20)
        let watched = try Ledger.open(at: path, options: Ledger.Options(access: .readOnly))
        defer { watched.close() }
        func head() throws -> UInt64 { try watched.read { try $0.head().sequence } }
        func record(_ out: String) {
            for line in out.split(separator: "\n") {
                guard let ack = Acknowledgement(String(line)) else { continue }
                if let earlier = acknowledged[ack.index] {
                    #expect(earlier == ack.sequence, "event \(ack.index) acknowledged as \(earlier) and \(ack.sequence)")
                }
                acknowledged[ack.index] = ack.sequence
            }
        }
        // Each round is killed within 20 ms of its first new event being durable: part-way
        // through its appends, whatever the machine's speed (20 ms is a few hundred events of
        // the 20,000). Only kills that leave the log part-way count.
        var landed: [UInt64] = []
        var rounds = 0
        while landed.count < killsWanted, rounds < 4 * killsWanted {
            rounds += 1
            let before = try head()
            let process = try RunningProduct("handover-lab", ["append", "--ledger", path, "--count", String(total), "--prefix", "k"])
            let ended = try PhaseKill.kill(process, once: { try head() > before }, spread: 20_000)
            record(ended.out)
            let after = try head()
            if ended.signalled, after > before, after < UInt64(total) + 1 { landed.append(after - before) }
        }
        #expect(landed.count >= killsWanted, "\(PhaseKill.tally(landed.count, of: rounds, in: "while it appended")); events each added: \(landed)")
        let last = try RunningProduct("handover-lab", ["append", "--ledger", path, "--count", String(total), "--prefix", "k"]).wait()
        #expect(last.status == 0, "the final run completes: \(last.err)")
        record(last.out)
        let ledger = try Ledger.open(at: path)
        defer { ledger.close() }
        let report = try ledger.verify()
        #expect(report.isIntact, "\(report.problem ?? "")")
        #expect(report.eventCount == UInt64(total) + 1, "every key appended exactly once")
        let mismatches = try ledger.read { view in
            try acknowledged.filter { i, seq in
                try view.sequence(forIdempotencyKey: "k:\(i)") != seq || view.event(seq)?.identifiers.accountID != "k-\(i)"
            }
        }
        #expect(mismatches.isEmpty, "acknowledged events missing or duplicated: \(mismatches.prefix(5))")
        #expect(acknowledged.count == total)
    }
}

/// One line `ack i seq` of `handover-lab append`: event i is durable as sequence seq.
private struct Acknowledgement {
    let index: Int
    let sequence: UInt64

    init?(_ line: String) {
        guard let match = try? #/^ack (?<index>\d+) (?<sequence>\d+)$/#.wholeMatch(in: line),
            let index = Int(match.output.index), let sequence = UInt64(match.output.sequence)
        else { return nil }
        self.index = index
        self.sequence = sequence
    }
}
