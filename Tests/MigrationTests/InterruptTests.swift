import AsyncHTTPClient
import Basics
import Foundation
import LMDB
import Ledger
import LogEngine
import Migration
import TestSupport
import Testing

/// Ctrl-C and SIGTERM during `handover exchange`, sent to the process as an operator would.
@Suite("exchange interrupted by a signal", .serialized)
struct InterruptTests {
    /// The stand-in's successful usermigrationinfo answers (generations and exchanges alike).
    static func answered(_ teams: TwoTeamsOnTheCommandLine) async throws -> Int {
        try await teams.standInAnswers()["usermigrationinfo.200", default: 0]
    }

    /// The number of events in the ledger at `directory`: `meta/head` read with LMDB alone
    /// (schemas/ledger-format.md), without opening it as a ledger.
    static func head(_ directory: String) -> UInt64 {
        (try? Environment(path: directory, options: .init(readOnly: true)).read { txn in
            try txn.get(try txn.openDatabase("meta", create: false), key: Array("head".utf8)).map { try BigEndian.uint64($0) }
        }) ?? 0
    }

    /// Starts an exchange and returns once its ledger holds `events` events. The wait blocks
    /// (no `await`): when the signal goes out must not depend on this process's busy task pool.
    static func exchangeUnderWay(_ teams: TwoTeamsOnTheCommandLine, events: UInt64, extra: [String] = []) throws -> (Process, Pipe) {
        let before = head(teams.recipient)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: productPath("handover"))
        process.arguments =
            ["exchange", "--ledger", teams.recipient, "--transfers", teams.handoff, "--out", teams.output, "--concurrency", "32"]
            + extra + teams.credentials("BBBB222222", "KEYB222222")
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        while head(teams.recipient) < before + events, process.isRunning { usleep(10_000) }
        return (process, out)
    }

    /// The one "run finished" in `ledger`, with its body.
    static func onlyFinishedRun(in ledger: Ledger) throws -> (event: RecordedEvent, body: RunFinished) {
        let finished = try events(.runFinished, of: nil, in: ledger)
        try #require(finished.count == 1)
        guard case .runFinished(let body) = finished[0].body else { throw LedgerError(.malformedRecord, "not a run-finished event") }
        return (finished[0], body)
    }

    /// Events of `type` recorded by the run `runID`.
    static func events(_ type: EventType, of runID: String?, in ledger: Ledger) throws -> [RecordedEvent] {
        try ledger.read { view in try view.sequences(of: type).compactMap { try view.event($0) } }.filter { runID == nil || $0.actor.runID == runID }
    }

    @Test(
        "SIGINT with 32 calls in flight: the calls finish within the grace period, exit 130, \"run finished\" with the run's counts, an output of exactly its users; a second run does the rest, nobody twice"
    )
    func sigint() async throws {
        let total = 3_000
        let teams = try TwoTeamsOnTheCommandLine(users: total, latencyMilliseconds: 50)
        defer { teams.standIn.stop() }
        let answeredBefore = try await InterruptTests.answered(teams)

        // A grace period far longer than the calls in flight take on any machine: none is cut
        // off, and the run ends once they are recorded, long before the grace period would end.
        let grace = 300.0
        let (process, out) = try InterruptTests.exchangeUnderWay(teams, events: 200, extra: ["--grace", String(grace)])
        #expect(process.isRunning, "the exchange was still running when interrupted")
        let signalled = ContinuousClock.now
        kill(process.processIdentifier, SIGINT)
        let printed = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let waited = ContinuousClock.now - signalled
        let summary = String(decoding: printed, as: UTF8.self)
        #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(process.terminationReason) \(process.terminationStatus)")
        #expect(waited < .seconds(grace), "exited \(waited) after SIGINT: it waited out the grace period instead of its calls")
        #expect(summary.contains("INTERRUPTED by SIGINT"), "\(summary)")

        var firstRun: [String] = []
        do {
            let ledger = try Ledger.open(at: teams.recipient)
            defer { ledger.close() }
            let (finished, body) = try InterruptTests.onlyFinishedRun(in: ledger)
            #expect(body.interrupted == "SIGINT")
            #expect(body.exitStatus == 130)
            let exchanged = try InterruptTests.events(.transferIDExchanged, of: finished.actor.runID, in: ledger)
            #expect(exchanged.count > 0 && exchanged.count < total)
            #expect(body.counts["succeeded"] == exchanged.count, "\(body.counts) against \(exchanged.count) exchanged events")
            #expect(body.counts["abandoned"] == nil, "nothing was cut off within the grace period: \(body.counts)")
            #expect(body.counts["failed"] == 0)
            #expect(body.counts["not_attempted"] == total - exchanged.count)
            firstRun = exchanged.compactMap { $0.identifiers.transferSub }
            #expect(summary.contains("\(exchanged.count) migrated in this run"), "\(summary)")
        }
        let rows = try CSVTable(path: teams.output).rows
        #expect(Set(rows.compactMap { $0["transfer_sub"] }) == Set(firstRun), "the output holds exactly the users this run exchanged")
        #expect(rows.count == firstRun.count)

        let second = try runProduct(
            "handover",
            ["exchange", "--ledger", teams.recipient, "--transfers", teams.handoff, "--out", teams.output, "--concurrency", "32"]
                + teams.credentials("BBBB222222", "KEYB222222"))
        #expect(second.status == 0, "\(second.err)")
        #expect(second.out.contains("already done before: \(firstRun.count)"), "\(second.out)")
        let ledger = try Ledger.open(at: teams.recipient)
        defer { ledger.close() }
        let exchanged = try InterruptTests.events(.transferIDExchanged, of: nil, in: ledger)
        #expect(exchanged.count == total)
        #expect(Set(exchanged.compactMap { $0.identifiers.transferSub }).count == total, "nobody exchanged twice in the ledger")
        #expect(try await InterruptTests.answered(teams) - answeredBefore == total, "the stand-in exchanged each user once")
        #expect(try CSVTable(path: teams.output).rows.count == total)
        #expect(try ledger.verify().isIntact)
    }

    @Test("a second signal abandons the calls in flight at once: they are counted, not recorded, and the next run does them")
    func secondSignal() async throws {
        let total = 100
        let teams = try TwoTeamsOnTheCommandLine(users: total, latencyMilliseconds: 1_500)
        defer { teams.standIn.stop() }
        // Run started, the token, and the first 32 users: the next 32 calls are in flight.
        let (process, out) = try InterruptTests.exchangeUnderWay(teams, events: 34, extra: ["--grace", "60"])
        kill(process.processIdentifier, SIGTERM)
        usleep(300_000)
        kill(process.processIdentifier, SIGTERM)
        let summary = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 143, "\(process.terminationReason) \(process.terminationStatus)")
        #expect(summary.contains("INTERRUPTED by SIGTERM") && summary.contains("abandoned in flight"), "\(summary)")

        do {
            let ledger = try Ledger.open(at: teams.recipient)
            defer { ledger.close() }
            let (finished, body) = try InterruptTests.onlyFinishedRun(in: ledger)
            #expect(body.interrupted == "SIGTERM" && body.exitStatus == 143)
            let exchanged = try InterruptTests.events(.transferIDExchanged, of: finished.actor.runID, in: ledger)
            #expect(body.counts["succeeded"] == exchanged.count)
            #expect((body.counts["abandoned"] ?? 0) > 0, "\(body.counts)")
            #expect(body.counts["failed"] == 0, "an abandoned call is not a failure: \(body.counts)")
            #expect(exchanged.count + (body.counts["abandoned"] ?? 0) + (body.counts["not_attempted"] ?? 0) == total, "\(body.counts)")
        }
        let second = try runProduct(
            "handover",
            ["exchange", "--ledger", teams.recipient, "--transfers", teams.handoff, "--out", teams.output, "--concurrency", "64"]
                + teams.credentials("BBBB222222", "KEYB222222"))
        #expect(second.status == 0, "\(second.err)")
        let ledger = try Ledger.open(at: teams.recipient)
        defer { ledger.close() }
        let exchanged = try InterruptTests.events(.transferIDExchanged, of: nil, in: ledger)
        #expect(exchanged.count == total && Set(exchanged.compactMap { $0.identifiers.transferSub }).count == total)
        #expect(try ledger.verify().isIntact)
    }
}
