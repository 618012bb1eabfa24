import Basics
import Foundation
import Ledger
import Migration
import TestSupport
import Testing

/// An exchange killed with SIGKILL again and again, then run to the end.
@Suite("exchange under SIGKILL", .serialized)
struct ExchangeCrashTests {
    @Test(
        "5,000 users, killed while exchanging (4 kills; 10 at full size) and re-run until done: one exchanged event each, a complete output, a verifying chain; each counted kill landed part-way through a run"
    )
    func crashLoop() async throws {
        // Large enough that an exchange is still running when a kill lands.
        let total = 5_000
        let killsWanted = TestSize.pick(quick: 4, full: 10)
        let teams = try TwoTeamsOnTheCommandLine(users: total, latencyMilliseconds: 5)
        defer { teams.standIn.stop() }
        let b = teams.recipient
        let output = teams.output
        let watched = try Ledger.open(at: b, options: Ledger.Options(access: .readOnly))
        func exchangedSoFar() throws -> Int { try watched.read { try $0.sequences(of: .transferIDExchanged).count } }

        // Each round is killed within 100 ms of its first exchange being durable, so part-way
        // through its users whatever the machine's speed; only kills that leave the exchange
        // part-way (and the run without its end) count.
        var landed: [Int] = []
        var rounds = 0
        var unkilled = 0
        while landed.count < killsWanted, rounds < 4 * killsWanted {
            rounds += 1
            let before = try exchangedSoFar()
            let process = try teams.startExchange(concurrency: 4)
            let ended = try PhaseKill.kill(process, once: { try exchangedSoFar() > before }, spread: 100_000)
            let after = try exchangedSoFar()
            if !ended.signalled { unkilled += 1 }
            if ended.signalled, after > before, after < total { landed.append(after - before) }
        }
        watched.close()
        #expect(landed.count >= killsWanted, "\(PhaseKill.tally(landed.count, of: rounds, in: "while it exchanged")); users each: \(landed)")
        let finished = try teams.startExchange(concurrency: 4).wait()
        #expect(finished.status == 0, "the exchange completed after \(rounds) killed rounds: \(finished.err)")

        let ledger = try Ledger.open(at: b)
        defer { ledger.close() }
        let exchanged = try ledger.read { view in try view.sequences(of: .transferIDExchanged).compactMap { try view.event($0) } }
        let transferSubs = exchanged.compactMap { $0.identifiers.transferSub }
        #expect(exchanged.count == total, "one exchanged event per user, found \(exchanged.count)")
        #expect(Set(transferSubs).count == total)
        let report = try ledger.verify()
        #expect(report.isIntact, "\(report.problem ?? "")")
        let rows = try CSVTable(path: output).rows
        #expect(rows.count == total)
        #expect(Set(rows.compactMap { $0["account_id"] }).count == total, "every account once in the output")

        // Every run that started either finished or was cut off by a kill and resumed by a
        // later run; the last one finished with exit 0. A round killed before its process
        // recorded "run started" leaves no run at all, so runs are counted, not rounds.
        let (started, ended) = try ledger.read { view in
            (
                try view.sequences(of: .runStarted).compactMap { try view.event($0) },
                try view.sequences(of: .runFinished).compactMap { try view.event($0) }
            )
        }
        let finishedRuns = Dictionary(uniqueKeysWithValues: ended.map { ($0.actor.runID ?? "", $0) })
        #expect(ended.count >= 1 + unkilled, "every round that was not killed, and the last run, recorded its end")
        #expect(started.count >= ended.count && started.count <= rounds + 1)
        for (index, run) in started.enumerated() {
            guard let end = finishedRuns[run.actor.runID ?? ""] else {
                #expect(index < started.count - 1, "run \(run.actor.runID ?? "?") never finished and no later run resumed it")
                continue
            }
            #expect(end.sequence > run.sequence)
        }
        #expect(Set(ended.compactMap(\.actor.runID)).isSubset(of: Set(started.compactMap(\.actor.runID))), "every finished run had started")
        let last = try #require(started.last.flatMap { finishedRuns[$0.actor.runID ?? ""] })
        guard case .runFinished(let body) = last.body else {
            Issue.record("not a run-finished event")
            return
        }
        #expect(body.exitStatus == 0)
        let verified = try runProduct("handover", ["verify", "--ledger", b])
        #expect(verified.status == 0, "\(verified.err)")
    }
}
