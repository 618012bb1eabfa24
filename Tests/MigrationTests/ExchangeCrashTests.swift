import Foundation
import Ledger
import Testing
import TestSupport

/// An exchange killed with SIGKILL again and again, then run to the end.
@Suite("exchange under SIGKILL", .serialized)
struct ExchangeCrashTests {
    @Test("5,000 users, killed at 10 or more random moments and re-run until done: one exchanged event each, a complete output, a verifying chain")
    func crashLoop() async throws {
        let dir = TemporaryDirectory()
        let apple = dir.sub("apple")
        try SimulatorProcess.registerTeam("AAAA111111", keyID: "KEYA111111", in: apple)
        try SimulatorProcess.registerTeam("BBBB222222", keyID: "KEYB222222", in: apple)
        let server = try SimulatorProcess.start(directory: apple, extra: ["--latency-ms", "5"])
        defer { server.stop() }
        let url = server.baseURL
        let a = dir.sub("a"), b = dir.sub("b")
        for (path, team, role) in [(a, "AAAA111111", "sender"), (b, "BBBB222222", "recipient")] {
            #expect(try runProduct("handover", ["init", "--ledger", path, "--team-id", team, "--client-id", "com.example.app", "--role", role]).status == 0)
        }
        let total = 5_000
        let users = dir.sub("users.csv"), handoff = dir.sub("handoff.csv"), output = dir.sub("exchanged.csv")
        try Data(("sub,account_id\n" + (0..<total).map { "000\($0 % 900).\(String(format: "%08x", $0)).0001,acct-\($0)\n" }.joined()).utf8).write(to: URL(fileURLWithPath: users))
        func credentials(_ team: String, _ key: String) -> [String] {
            ["--team-id", team, "--client-id", "com.example.app", "--key-id", key, "--private-key", apple + "/keys/AuthKey_\(key).p8", "--apple-base-url", url]
        }
        let generated = try runProduct("handover", ["generate", "--ledger", a, "--users", users, "--target", "BBBB222222", "--out", handoff, "--concurrency", "32"] + credentials("AAAA111111", "KEYA111111"))
        #expect(generated.status == 0, "\(generated.err)")

        var generator = SystemRandomNumberGenerator()
        var kills = 0, rounds = 0, finished = false
        while !finished, rounds < 60 {
            rounds += 1
            let process = Process()
            process.executableURL = URL(fileURLWithPath: productPath("handover"))
            process.arguments = ["exchange", "--ledger", b, "--transfers", handoff, "--out", output, "--concurrency", "4"] + credentials("BBBB222222", "KEYB222222")
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
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
