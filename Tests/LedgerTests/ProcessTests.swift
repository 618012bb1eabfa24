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

    @Test("killed with SIGKILL at random moments (8; 20 at full size): no acknowledged event lost, none duplicated, the chain verifies")
    func crashLoop() async throws {
        let dir = TemporaryDirectory()
        let path = dir.sub("l")
        try await Ledger.create(at: path, testIdentity()).close()
        let total = 20_000
        var acknowledged: [Int: UInt64] = [:]
        var generator = SystemRandomNumberGenerator()
        var kills = 0
        var rounds = 0
        let killsWanted = TestSize.pick(quick: 8, full: 20)
        // Kill until that many kills have landed on a running appender, then let one run finish.
        while true {
            rounds += 1
            let process = Process()
            process.executableURL = URL(fileURLWithPath: productPath("handover-lab"))
            process.arguments = ["append", "--ledger", path, "--count", String(total), "--prefix", "k"]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let killing = kills < killsWanted && rounds < 80
            if killing {
                try await Task.sleep(nanoseconds: UInt64.random(in: 30_000_000...300_000_000, using: &generator))
                kill(process.processIdentifier, SIGKILL)
            }
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal { kills += 1 }
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                guard let ack = Acknowledgement(String(line)) else { continue }
                if let earlier = acknowledged[ack.index] {
                    #expect(earlier == ack.sequence, "event \(ack.index) acknowledged as \(earlier) and \(ack.sequence)")
                }
                acknowledged[ack.index] = ack.sequence
            }
            if !killing {
                #expect(process.terminationStatus == 0, "the final run completes")
                break
            }
        }
        #expect(kills >= killsWanted, "SIGKILL landed \(kills) times in \(rounds) rounds")
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
