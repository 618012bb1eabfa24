import Foundation
import TestSupport
import Testing

@Suite("rebuild and verify --deep killed")
struct FoldKillTests {
    let dir = TemporaryDirectory()

    @Test(
        "projections rebuild and verify --deep killed with SIGKILL while their fold runs (4 kills of each; 10 at full size): the projections in use answer at each kill, the same command run again with the same --scratch finishes with the same answers, and no scratch directory or run file is left"
    )
    func foldKilled() throws {
        let ledger = dir.sub("ledger")
        let appended = try runProduct("handover-lab", ["append", "--ledger", ledger, "--count", "12000", "--prefix", "k", "--create"])
        #expect(appended.status == 0, "\(appended.err)")
        func state() throws -> String { try handover(["query", "state", "--ledger", ledger, "--format", "csv"]).out }
        let expected = try state()
        #expect(expected.utf8.filter { $0 == UInt8(ascii: "\n") }.count == 12_001, "a header and 12,000 users")
        let scratch = dir.sub("scratch")
        let none = try handover(["projections", "rebuild", "--ledger", ledger, "--fold-memory", "0"])
        #expect(none.status != 0 && none.err.contains("--fold-memory"), "\(none.err)")
        // 1 MB for 12,000 users: said before it starts, and the working state spills.
        let spilled = try handover(["projections", "rebuild", "--ledger", ledger, "--fold-memory", "1"])
        #expect(
            spilled.status == 0
                && spilled.err.hasPrefix("note: about 12000 users: the fold's working state needs about 3.4 MB, more than --fold-memory 1 allows;"),
            "\(spilled.err)")
        #expect(try state() == expected)
        // 1 MB of fold memory: the fold writes runs as it goes, so kills land while one is written.
        let commands = [["projections", "rebuild", "--fold-memory", "1"], ["verify", "--deep", "--fold-memory", "1"]]
        // The scratch directory exists while the fold runs and is removed when it ends: a kill is
        // sent within 50 ms of its appearing, and counts when the killed process left it behind.
        let wanted = TestSize.pick(quick: 4, full: 10)
        var landed = [0, 0]
        var rounds = [0, 0]
        for which in [0, 1] {
            let arguments = commands[which] + ["--ledger", ledger, "--scratch", scratch]
            while landed[which] < wanted, rounds[which] < 4 * wanted {
                rounds[which] += 1
                let process = try RunningProduct("handover", arguments)
                let ended = PhaseKill.kill(process, once: { FileManager.default.fileExists(atPath: scratch) }, spread: 50_000)
                if ended.signalled, FileManager.default.fileExists(atPath: scratch) { landed[which] += 1 }
                #expect(try state() == expected, "\(arguments[0]) round \(rounds[which]): the projections in use answer after the kill")
                let again = try handover(arguments)
                #expect(again.status == 0, "\(arguments[0]) round \(rounds[which]): \(again.out)\(again.err)")
                #expect(!FileManager.default.fileExists(atPath: scratch), "round \(rounds[which]): the scratch directory is removed")
                #expect(try state() == expected, "round \(rounds[which])")
            }
            #expect(landed[which] >= wanted, "\(commands[which][0]): \(PhaseKill.tally(landed[which], of: rounds[which], in: "while its fold ran"))")
        }
        #expect(try handover(["verify", "--deep", "--ledger", ledger]).status == 0)
    }
}
