import Foundation
import GRDB
import Ledger
import TestSupport
import Testing

/// `status` during an `apply --commit` held on the app database's write lock, then of the same
/// run killed: running, then stopped with the command that resumes it, which, run as printed,
/// leaves the table as one uninterrupted run does.
@Suite("status sees an apply run: running, stopped, resumed")
struct ApplyRunStandingTests {
    /// Holds `path`'s write lock (an immediate transaction) from a thread of its own until
    /// ``release()``: an `apply` meanwhile records its batch's intent and then waits on the lock.
    final class WriteLock: @unchecked Sendable {
        private let taken = DispatchSemaphore(value: 0)
        private let released = DispatchSemaphore(value: 0)
        private let done = DispatchSemaphore(value: 0)

        init(_ path: String) throws {
            let queue = try DatabaseQueue(path: path)
            let thread = Thread { [taken, released, done] in
                try? queue.inTransaction(.immediate) { _ in
                    taken.signal()
                    released.wait()
                    return .rollback
                }
                done.signal()
            }
            thread.start()
            taken.wait()
        }

        func release() {
            released.signal()
            done.wait()
        }
    }

    @Test(
        "an apply --commit --users LIST held on the app database's lock after its first intent: status says running; killed, stopped with exit 1 and the command that resumes it, which, given another list, is refused, and given the same, leaves the table as an uninterrupted run does; status is then clear of it"
    )
    func heldKilledResumed() throws {
        let s = try EmailSetup()
        let pristine = try s.pristine()
        func copy(_ name: String) throws -> SQLiteAppTable { try s.copy(of: pristine, as: name) }
        // The run is limited to a list of accounts (--users): resumed, it must take the same.
        let list = s.dir.sub("users.txt")
        try Data(s.relay.map { $0.account + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: list))
        let otherList = s.dir.sub("other.txt")
        try Data((s.relay[0].account + "\n").utf8).write(to: URL(fileURLWithPath: otherList))
        // What one uninterrupted run leaves, on a ledger of its own.
        let referenceLedger = s.dir.sub("reference-ledger")
        #expect(try runCommand("/bin/cp", ["-a", s.ledger, referenceLedger]).status == 0)
        let reference = try copy("reference.sqlite")
        let once = try handover(s.options(reference, set: ApplyEmailTests.both, ledger: referenceLedger) + ["--users", list, "--commit"])
        #expect([0, 1].contains(once.status), "\(once.out)\(once.err)")
        let before = try StatusReading(s.ledger)
        #expect(before.runs.isEmpty, "\(before.runs)")

        let table = try copy("app.sqlite")
        let lock = try WriteLock(table.path)
        let log = try Ledger.open(at: s.ledger, options: Ledger.Options(access: .readOnly))
        defer { log.close() }
        // The demo's own apply left intents: wait for one more, this run's first.
        func intents() throws -> Int { try log.read { try $0.sequences(of: .applyIntended).count } }
        let intentsBefore = try intents()
        let process = try RunningProduct("handover", s.options(table, set: ApplyEmailTests.both) + ["--users", list, "--commit"])
        let deadline = Date().addingTimeInterval(PhaseKill.deadline)
        while try intents() == intentsBefore, process.isRunning, Date() < deadline { usleep(2_000) }
        #expect(process.isRunning, "the run waits on the lock")
        let running = try StatusReading(s.ledger)
        let total = try #require(running.runs.first?["total"] as? Int, "status lists the apply running: \(running.text)\n\(running.json)")
        let resume = try StatusReading.heldThenKilled(
            process, ledger: s.ledger, command: "apply", done: 0, total: total, exitWhileRunning: before.status)
        lock.release()
        #expect(resume.contains("--to \(table.path)") && resume.contains("--commit"), "\(resume)")
        #expect(PrintedCommand.placeholders(in: resume) == ["USERS.TXT"], "an apply to SQLite resumes with its list to give again: \(resume)")

        let otherScope = try PrintedCommand.run(resume, fill: ["USERS.TXT": otherList])
        #expect(
            otherScope.status == 2 && otherScope.err.contains("was stopped before it finished; finish it with the options it was started with"),
            "resumed with another list of accounts, it is refused: \(otherScope.err)")
        let resumed = try PrintedCommand.run(resume, fill: ["USERS.TXT": list])
        #expect([0, 1].contains(resumed.status), "\(resumed.command): \(resumed.out)\(resumed.err)")
        #expect(try table.dump() == reference.dump(), "the table as one uninterrupted run leaves it")
        let after = try StatusReading(s.ledger)
        #expect(after.runs.isEmpty && after.status == before.status, "\(after.text)")
    }
}
