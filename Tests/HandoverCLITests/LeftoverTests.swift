import Foundation
import TestSupport
import Testing

/// `tools/leftovers`, which `tools/test` runs at its end: a test directory left behind fails the
/// run and is named with the test that left it.
@Suite("test directories left behind")
struct LeftoverTests {
    @Test("a directory a test left behind: named with the test, removed, exit 1; nothing left: exit 0; what was there before is no one's")
    func leftBehindIsNamed() throws {
        let dir = TemporaryDirectory()
        #expect(dir.path.contains("/handover-test-LeftoverTests.leftBehindIsNamed-"), "\(dir.path)")
        let tmp = dir.sub("tmp")
        try FileManager.default.createDirectory(
            atPath: tmp + "/handover-test-Earlier.run-00000000-0000-0000-0000-000000000000", withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("tools/leftovers").path
        let before = dir.sub("before.txt")
        let listed = try runCommand(script, ["list"], environment: ["TMPDIR": tmp])
        try Data(listed.out.utf8).write(to: URL(fileURLWithPath: before))
        #expect(try runCommand(script, ["check", before], environment: ["TMPDIR": tmp]).status == 0)

        let left = "handover-test-FoldKillTests.foldKilled-6f670813194c"
        try FileManager.default.createDirectory(atPath: tmp + "/" + left + "/ledger", withIntermediateDirectories: true)
        let checked = try runCommand(script, ["check", before], environment: ["TMPDIR": tmp])
        #expect(checked.status == 1, "\(checked.out)\(checked.err)")
        #expect(checked.err.contains("\(tmp)/\(left): left by the test FoldKillTests.foldKilled"), "\(checked.err)")
        #expect(!FileManager.default.fileExists(atPath: tmp + "/" + left), "removed once named")
        #expect(FileManager.default.fileExists(atPath: tmp + "/handover-test-Earlier.run-00000000-0000-0000-0000-000000000000"), "not this run's")
    }
}
