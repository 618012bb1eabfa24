import Foundation
import Ledger
import Testing
import TestSupport

/// An exchange killed with SIGKILL again and again, then run to the end.
@Suite("exchange under SIGKILL", .serialized)
struct ExchangeCrashTests {
    @Test("5,000 users, killed at 10 or more random moments and re-run until done: one exchanged event each, a complete output, a verifying chain")
    func crashLoop() async throws {
        let total = 5_000
        let teams = try TwoTeamsOnTheCommandLine(users: total, latencyMilliseconds: 5)
        defer { teams.standIn.stop() }
        let b = teams.recipient, output = teams.output

        var generator = SystemRandomNumberGenerator()
        var kills = 0, rounds = 0, finished = false
        while !finished, rounds < 60 {
            rounds += 1
            let process = try teams.startExchange(concurrency: 4)
            if kills < 10 {
                // A blocking sleep: the kill's timing must not depend on this process's busy task pool.
                usleep(UInt32.random(in: 150_000...600_000, using: &generator))
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal { kills += 1 } else { finished = process.terminationStatus == 0 }
        }
        #expect(kills >= 10)
        #expect(finished, "the exchange completed after \(rounds) rounds")

        let ledger = try Ledger.open(at: b)
        defer { ledger.close() }
        let exchanged = try ledger.read { view in try view.sequences(of: .transferIDExchanged).compactMap { try view.event($0) } }
        let transferSubs = exchanged.compactMap { $0.identifiers.transferSub }
        #expect(exchanged.count == total, "one exchanged event per user, found \(exchanged.count)")
        #expect(Set(transferSubs).count == total)
        let report = try ledger.verify()
        #expect(report.isIntact, "\(report.problem ?? "")")
        let rows = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").dropFirst()
        #expect(rows.count == total)
        #expect(Set(rows.map { $0.split(separator: ",")[0] }).count == total, "every account once in the output")
        let runs = try ledger.read { try $0.sequences(of: .runStarted).count }
        #expect(runs == rounds)
        #expect(try runProduct("handover", ["verify", "--ledger", b]).status == 0)
    }
}
