import Foundation
import TestSupport
import Testing

@Suite("rebuild and verify --deep killed")
struct FoldKillTests {
    let dir = TemporaryDirectory()

    @Test(
        "projections rebuild and verify --deep killed with SIGKILL at random moments (4 of each; 10 at full size): the projections in use answer at each kill, the same command run again with the same --scratch finishes with the same answers, and no scratch directory or run file is left"
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
        // 1 MB of fold memory: the fold writes runs as it goes, so kills land while one is written.
        let commands = [["projections", "rebuild", "--fold-memory", "1"], ["verify", "--deep", "--fold-memory", "1"]]
        // Kill within the time each command takes on this machine, as busy as it is now.
        let took = try commands.map { command -> UInt32 in
            let start = DispatchTime.now()
            let ran = try handover(command + ["--ledger", ledger, "--scratch", scratch])
            #expect(ran.status == 0, "\(ran.err)")
            return UInt32(min(5_000_000, max(1_000, (DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000)))
        }
        var killed = [0, 0]
        for round in 0..<TestSize.pick(quick: 8, full: 20) {
            let which = round % 2
            let arguments = commands[which] + ["--ledger", ledger, "--scratch", scratch]
            if try handoverKilled(arguments, within: took[which]) { killed[which] += 1 }
            #expect(try state() == expected, "round \(round): the projections in use answer after the kill")
            let again = try handover(arguments)
            #expect(again.status == 0, "round \(round): \(again.out)\(again.err)")
            #expect(!FileManager.default.fileExists(atPath: scratch), "round \(round): the scratch directory is removed")
            #expect(try state() == expected, "round \(round)")
        }
        #expect(killed[0] > 0 && killed[1] > 0, "killed \(killed): the test did not interrupt both commands")
        #expect(try handover(["verify", "--deep", "--ledger", ledger]).status == 0)
    }
}
