import AsyncHTTPClient
import Foundation
import TestSupport

/// Both teams as users run them, each step its own `handover` process: the stand-in serving
/// teams A and B, both ledgers made by `handover init`, and team A's handoff file of `users`
/// users made by `handover generate`, ready for team B's `handover exchange`.
struct TwoTeamsOnTheCommandLine {
    let dir = TemporaryDirectory()
    let standIn: ServerProcess
    /// Team A's and team B's ledger directories.
    let sender: String, recipient: String
    /// The handoff file (generate's output, exchange's input) and exchange's output.
    let handoff: String, output: String

    init(users: Int, latencyMilliseconds: Int) throws {
        let apple = dir.sub("apple")
        try SimulatorProcess.registerTeam("AAAA111111", keyID: "KEYA111111", in: apple)
        try SimulatorProcess.registerTeam("BBBB222222", keyID: "KEYB222222", in: apple)
        standIn = try SimulatorProcess.start(directory: apple, extra: ["--latency-ms", String(latencyMilliseconds)])
        sender = dir.sub("a")
        recipient = dir.sub("b")
        handoff = dir.sub("handoff.csv")
        output = dir.sub("exchanged.csv")
        for (path, team, role) in [(sender, "AAAA111111", "sender"), (recipient, "BBBB222222", "recipient")] {
            let created = try runProduct("handover", ["init", "--ledger", path, "--team-id", team, "--client-id", "com.example.app", "--role", role])
            guard created.status == 0 else { throw ServerProcess.Failed(description: "init failed: \(created.err)") }
        }
        let usersFile = dir.sub("users.csv")
        try Data(("sub,account_id\n" + (0..<users).map { "000\($0 % 900).\(String(format: "%08x", $0)).0001,acct-\($0)\n" }.joined()).utf8)
            .write(to: URL(fileURLWithPath: usersFile))
        let generated = try runProduct(
            "handover",
            [
                "generate", "--ledger", sender, "--users", usersFile, "--target", "BBBB222222", "--out", handoff,
                "--concurrency", "32",
            ] + credentials("AAAA111111", "KEYA111111"))
        guard generated.status == 0 else { throw ServerProcess.Failed(description: "generate failed: \(generated.err)") }
    }

    /// The stand-in's answers so far, by endpoint and outcome (`token.200`, `usermigrationinfo.400`, ...).
    func standInAnswers() async throws -> [String: Int] {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: standIn.baseURL + "/simulator/stats"), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        return try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Int] ?? [:]
    }

    /// The stand-in's state directory.
    var apple: String { dir.sub("apple") }

    /// Credential and endpoint flags for `team` with key `key`.
    func credentials(_ team: String, _ key: String) -> [String] {
        [
            "--team-id", team, "--client-id", "com.example.app", "--key-id", key, "--private-key", apple + "/keys/AuthKey_\(key).p8",
            "--apple-base-url", standIn.baseURL,
        ]
    }

    /// Starts team B's `handover exchange` of the handoff file at `concurrency`, its output kept
    /// for a failed expectation to show.
    func startExchange(concurrency: Int) throws -> RunningProduct {
        try RunningProduct(
            "handover",
            ["exchange", "--ledger", recipient, "--transfers", handoff, "--out", output, "--concurrency", String(concurrency)]
                + credentials("BBBB222222", "KEYB222222"))
    }
}
