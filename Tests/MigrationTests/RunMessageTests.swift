import Foundation
import Ledger
import Testing
import TestSupport

/// What the migration commands print for people, run as users run them against the stand-in:
/// the words they read and the exit status with them.
@Suite("run messages", .serialized)
struct RunMessageTests {
    let dir = TemporaryDirectory()

    /// The stand-in's state directory, with teams A and B registered.
    private func apple() throws -> String {
        let apple = dir.sub("apple")
        try SimulatorProcess.registerTeam("AAAA111111", keyID: "KEYA111111", in: apple)
        try SimulatorProcess.registerTeam("BBBB222222", keyID: "KEYB222222", in: apple)
        return apple
    }

    /// Credential and endpoint flags for `team` with key `key`, calling `baseURL`.
    private func credentials(_ team: String, _ key: String, baseURL: String) -> [String] {
        ["--team-id", team, "--client-id", "com.example.app", "--key-id", key, "--private-key", dir.sub("apple") + "/keys/AuthKey_\(key).p8",
         "--apple-base-url", baseURL]
    }

    /// A new ledger at `dir/name`.
    private func ledger(_ name: String, team: String, role: String) throws -> String {
        let path = dir.sub(name)
        let created = try handover("init", "--ledger", path, "--team-id", team, "--client-id", "com.example.app", "--role", role)
        #expect(created.status == 0, "\(created.err)")
        return path
    }

    /// A users file of `count` users for team A.
    private func users(_ count: Int) throws -> String {
        let path = dir.sub("users-\(count).csv")
        try Data(("sub,account_id\n" + (0..<count).map { "001000.aaaa.\(String(format: "%04d", $0)),acct-\($0)\n" }.joined()).utf8)
            .write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("generate's summary counts the transfer identifiers generated, one in the singular; handoff issue tells team B to receive the package with team A's exported verifier key, then exchange")
    func generateAndIssue() throws {
        let standIn = try SimulatorProcess.start(directory: try apple())
        defer { _ = standIn.stop() }
        let a = try ledger("a", team: "AAAA111111", role: "sender")
        let generated = try handover(["generate", "--ledger", a, "--users", try users(1), "--target", "BBBB222222", "--out", dir.sub("handoff.csv")]
                                     + credentials("AAAA111111", "KEYA111111", baseURL: standIn.baseURL))
        #expect(generated.status == 0, "\(generated.out)\(generated.err)")
        #expect(generated.out.hasPrefix("generate: 1 user in the input; 1 transfer identifier generated in this run\n"), "\(generated.out)")
        #expect(generated.out.contains("  wrote 1 row to \(dir.sub("handoff.csv"))\n") && !generated.out.contains("migrated"), "\(generated.out)")

        let package = dir.sub("handoff-0001")
        let issued = try handover("handoff", "issue", "--ledger", a, "--target", "BBBB222222", "--out", package)
        #expect(issued.status == 0, "\(issued.err)")
        #expect(issued.out.hasSuffix("""
            Send the directory to team BBBB222222, with this ledger's verifier key given out of band (once), which they pin:
              handover checkpoint --ledger \(a) --public-key > a.pub
            The day it arrives, team BBBB222222 checks it and records its users, then exchanges them:
              handover handoff receive \(package) --ledger LEDGER --sender-key a.pub
              handover exchange --ledger LEDGER --transfers \(package) --sender-key a.pub ...

            """), "\(issued.out)")
        #expect(!issued.out.contains("A.pub"), "\(issued.out)")
    }
}
