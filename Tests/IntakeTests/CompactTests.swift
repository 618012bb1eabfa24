import Foundation
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
}
