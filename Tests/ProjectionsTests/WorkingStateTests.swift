import Foundation
import TestSupport
import Testing

@testable import Projections

/// The bulk fold's working state: each user's current record and each identifier's user, in
/// memory within a budget or spilled to the scratch directory.
@Suite("Working state")
struct WorkingStateTests {
    let dir = TemporaryDirectory()

    /// A record's value for `user` written in `round`: its bytes say whose and when.
    private func value(_ user: UInt64, _ round: Int, size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: Int(user) &* 31 &+ round &* 7 &+ $0) }
    }

    @Test(
        "records read back as last set while users come and go for fifty rounds, in memory and spilled to files; the garbage is reclaimed in place, so the state stays the size of what lives"
    )
    func recordsThroughChurn() throws {
        for budget in [64 << 20, 1] {
            let memory = WorkingMemory(budget: budget, directory: dir.sub("budget-\(budget)"))
            try FileManager.default.createDirectory(atPath: dir.sub("budget-\(budget)"), withIntermediateDirectories: true)
            let state = try WorkingState(memory: memory)
            defer { state.release() }
            var expected: [UInt64: (value: [UInt8], sequence: UInt64)] = [:]
            var sequence: UInt64 = 0
            for round in 0..<50 {
                // Last round's users leave (merged away), a thousand new ones come, and half of
                // them grow past their slot's room.
                for key in expected.keys {
                    state.removeRecord(key)
                    expected[key] = nil
                }
                for _ in 0..<1_000 {
                    let key = try state.newUser()
                    sequence += 1
                    let bytes = value(key, round, size: 150 + Int(key % 50))
                    try state.setRecord(key, value: bytes, sequence: sequence)
                    expected[key] = (bytes, sequence)
                }
                for key in expected.keys where key % 2 == 0 {
                    sequence += 1
                    let bytes = value(key, round + 1, size: 300)
                    try state.setRecord(key, value: bytes, sequence: sequence)
                    expected[key] = (bytes, sequence)
                }
                for (key, record) in expected {
                    let stored = try #require(state.record(key))
                    #expect(Array(stored.value) == record.value && stored.sequence == record.sequence)
                }
            }
            #expect(state.record(1) == nil && state.record(state.users + 1) == nil)
            // What lives is about 1,000 × 330 bytes; fifty rounds without reclaiming would leave
            // more than 16 MB behind.
            #expect(state.bytes < 4 << 20, "budget \(budget): \(state.bytes) bytes")
            #expect((memory.spilled > 0) == (budget == 1))
        }
    }

    @Test("each identifier finds the user it was last linked to as the table grows; an identifier never linked finds none")
    func identifiersThroughGrowth() throws {
        let memory = WorkingMemory(budget: 64 << 20, directory: dir.path)
        let state = try WorkingState(memory: memory)
        defer { state.release() }
        var holder: [UInt64: Set<[UInt8]>] = [:]
        for _ in 0..<30_000 {
            let key = try state.newUser()
            for kind in ["sub", "transfer", "account"] {
                let identifier = Array("\(kind)-\(key)".utf8)
                holder[key, default: []].insert(identifier)
                try state.link(identifier, to: key, confirmed: true)
            }
        }
        for key in stride(from: UInt64(1), through: 30_000, by: 997) {
            for identifier in holder[key]! {
                #expect(state.userKey(for: identifier) { holder[$0]!.contains(identifier) } == key)
            }
        }
        #expect(state.userKey(for: Array("sub-30001".utf8)) { _ in true } == nil)
    }
}
