import Foundation
import Synchronization
import TestSupport
import Testing

@Suite("handover compact", .serialized)
struct CompactTests {
    /// `data.mdb`'s size in `ledger`.
    private func fileSize(_ ledger: String) throws -> Int64 {
        (try FileManager.default.attributesOfItem(atPath: ledger + "/data.mdb")[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// What a reader relies on: the users, the migrations and the log's head.
    private func answers(_ ledger: String) throws -> [String] {
        try [["query", "state", "--format", "json"], ["query", "migrated", "--format", "json"], ["status", "--format", "json"]].map { arguments in
            let answer = try handover(arguments + ["--ledger", ledger])
            #expect(answer.status == 0, "\(arguments): \(answer.err)")
            return answer.out
        }
    }

    @Test(
        "after a rebuild, compact gives back the freed room: the file shrinks, verify --deep passes and every answer is the same; refused while serve has the ledger open, changing nothing; a copy left by a stopped compaction is removed"
    )
    func compactAfterRebuild() throws {
        let dir = TemporaryDirectory()
        let (ledger, jwks) = try IntakeFixture.commandLineLedger(in: dir, name: "ledger")
        let appended = try runProduct("handover-lab", ["append", "--ledger", ledger, "--count", "6000", "--prefix", "c", "--tasks", "4"])
        #expect(appended.status == 0, "\(appended.err)")
        let rebuilt = try handover("projections", "rebuild", "--ledger", ledger)
        #expect(rebuilt.status == 0, "\(rebuilt.err)")
        let before = try answers(ledger)
        let grown = try fileSize(ledger)

        let serve = try ServerProcess(["serve", "--ledger", ledger, "--port", "0", "--jwks-file", jwks])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: ledger + "/data.mdb"))
        let refused = try handover("compact", "--ledger", ledger)
        #expect(refused.status == 1)
        #expect(refused.err.contains("has \(ledger) open") && refused.err.contains("nothing was changed"), "\(refused.err)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ledger + "/data.mdb")) == bytes)
        #expect(serve.stop() == 0)

        // A compaction stopped part-way leaves its unfinished copy; the next one removes it.
        let leftover = ledger + "/data.mdb.compact.tmp-stopped"
        try FileManager.default.createDirectory(atPath: leftover, withIntermediateDirectories: false)
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: leftover + "/data.mdb"))
        let compacted = try handover("compact", "--ledger", ledger)
        #expect(compacted.status == 0, "\(compacted.err)")
        #expect(compacted.out.hasPrefix("Compacted \(ledger): "), "\(compacted.out)")
        #expect(!FileManager.default.fileExists(atPath: leftover))
        let contents = try FileManager.default.contentsOfDirectory(atPath: ledger)
        #expect(!contents.contains { $0.hasPrefix("data.mdb.compact") }, "\(contents)")
        let small = try fileSize(ledger)
        #expect(small < grown, "\(small) bytes after, \(grown) before")
        #expect(try answers(ledger) == before)
        let deep = try handover("verify", "--deep", "--ledger", ledger)
        #expect(deep.status == 0, "\(deep.out) \(deep.err)")
        // The ledger takes writes again after it.
        let more = try runProduct("handover-lab", ["append", "--ledger", ledger, "--count", "100", "--prefix", "after", "--tasks", "2"])
        #expect(more.status == 0, "\(more.err)")
        #expect(try handover("verify", "--deep", "--ledger", ledger).status == 0)
    }

    @Test(
        "status run over and over in other processes while compact runs again and again: every status answers with the whole log, waiting while a compaction runs, and each compaction either finishes or is refused"
    )
    func readersDuringCompaction() throws {
        let dir = TemporaryDirectory()
        let (ledger, _) = try IntakeFixture.commandLineLedger(in: dir, name: "ledger")
        let appended = try runProduct("handover-lab", ["append", "--ledger", ledger, "--count", "6000", "--prefix", "r", "--tasks", "4"])
        #expect(appended.status == 0, "\(appended.err)")
        let expected = try handover("status", "--format", "json", "--ledger", ledger)
        #expect(expected.status == 0 && expected.out.contains("6001"), "\(expected.out)")
        // The readers run in one thread, status after status; every other round the test holds
        // them (the thread parks between two statuses), so that those compactions have the
        // ledger to themselves and must finish, while the others meet readers and either finish
        // or are refused.
        let stop = Atomic(false)
        let held = Atomic(false)
        let parked = Atomic(false)
        let answers = Mutex<[(status: Int32, out: String, err: String)]>([])
        let reader = Thread {
            while !stop.load(ordering: .relaxed) {
                if held.load(ordering: .acquiring) {
                    parked.store(true, ordering: .releasing)
                    usleep(1_000)
                    continue
                }
                parked.store(false, ordering: .releasing)
                let answer = (try? handover("status", "--format", "json", "--ledger", ledger)) ?? (-1, "", "could not run")
                answers.withLock { $0.append(answer) }
            }
        }
        reader.start()
        var finishedAlone = 0
        var met = 0
        for round in 0..<12 {
            let alone = round % 2 == 1
            held.store(alone, ordering: .releasing)
            if alone {
                let deadline = Date().addingTimeInterval(120)
                while !parked.load(ordering: .acquiring), Date() < deadline { usleep(1_000) }
            }
            let compacted = try handover("compact", "--ledger", ledger)
            if alone {
                #expect(compacted.status == 0, "round \(round), no reader running: \(compacted.err)")
                if compacted.status == 0 { finishedAlone += 1 }
            } else if compacted.status != 0 {
                met += 1
                #expect(compacted.status == 1 && compacted.err.contains("open"), "round \(round): \(compacted.err)")
            }
        }
        stop.store(true, ordering: .relaxed)
        let deadline = Date().addingTimeInterval(120)
        while answers.withLock({ $0.count }) == 0 || reader.isExecuting, Date() < deadline { usleep(10_000) }
        #expect(finishedAlone == 6, "every compaction with the readers held finished")
        #expect(answers.withLock { $0.count } > 0)
        for answer in answers.withLock({ $0 }) {
            #expect(answer.status == 0 && answer.out == expected.out, "\(answer.out)\(answer.err)")
        }
        print("compact beside status: \(answers.withLock { $0.count }) statuses; of 6 compactions beside them, \(met) refused")
        #expect(try handover("verify", "--deep", "--ledger", ledger).status == 0)
    }
}
