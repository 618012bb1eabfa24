import AsyncHTTPClient
import Foundation
import Ledger
import TestSupport
import Testing

/// `status` during a run and after one was killed: a generate and an exchange held part way by
/// the stand-in (its calls answered up to a number, the rest held), a receive stopped part way
/// (SIGSTOP), each then killed (SIGKILL) and resumed by the command `status` prints.
@Suite("status sees every run: running, stopped, resumed", .serialized)
struct RunStandingTests {
    /// Both teams' ledgers and the stand-in, which holds migration calls when told to.
    struct Teams {
        let dir = TemporaryDirectory()
        let standIn: ServerProcess
        let a: String, b: String
        let users: String

        init(users count: Int) throws {
            let apple = dir.sub("apple")
            try SimulatorProcess.registerTeam("AAAA111111", keyID: "KEYA111111", in: apple)
            try SimulatorProcess.registerTeam("BBBB222222", keyID: "KEYB222222", in: apple)
            standIn = try SimulatorProcess.start(directory: apple)
            a = dir.sub("a")
            b = dir.sub("b")
            users = dir.sub("users.csv")
            try Data(("sub,account_id\n" + (0..<count).map { "000\($0 % 900).\(String(format: "%08x", $0)).0001,acct-\($0)\n" }.joined()).utf8)
                .write(to: URL(fileURLWithPath: users))
            try initLedger(a, role: "sender")
            try initLedger(b, role: "recipient")
        }

        func initLedger(_ path: String, role: String) throws {
            let team = role == "sender" ? "AAAA111111" : "BBBB222222"
            let made = try handover("init", "--ledger", path, "--team-id", team, "--client-id", "com.example.app", "--role", role)
            #expect(made.status == 0, "\(made.err)")
        }

        /// Team A's or team B's credentials, as the environment gives them to a printed command.
        func environment(team: String, key: String) -> [String: String] {
            [
                "APPLE_TEAM_ID": team, "APPLE_CLIENT_ID": "com.example.app", "APPLE_KEY_ID": key,
                "APPLE_PRIVATE_KEY_PATH": dir.sub("apple") + "/keys/AuthKey_\(key).p8", "HANDOVER_APPLE_BASE_URL": standIn.baseURL,
            ]
        }
        var teamA: [String: String] { environment(team: "AAAA111111", key: "KEYA111111") }
        var teamB: [String: String] { environment(team: "BBBB222222", key: "KEYB222222") }

        /// Holds every migration call after the next `calls`, until ``release()``.
        func hold(after calls: Int) async throws { try await post("/simulator/hold?after=\(calls)") }
        func release() async throws { try await post("/simulator/release") }

        private func post(_ path: String) async throws {
            var request = HTTPClientRequest(url: standIn.baseURL + path)
            request.method = .POST
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            #expect(response.status == .ok)
        }

        /// Events of `type` in `ledger`, read without opening it for writing.
        func count(_ type: EventType, in ledger: String) throws -> Int {
            let log = try Ledger.open(at: ledger, options: Ledger.Options(access: .readOnly))
            defer { log.close() }
            return try log.read { try $0.sequences(of: type).count }
        }

        /// Waits (blocking) until `ledger` holds `wanted` events of `type`, or the process ends.
        func wait(for wanted: Int, _ type: EventType, in ledger: String, while process: RunningProduct) throws {
            let deadline = Date().addingTimeInterval(PhaseKill.deadline)
            while try count(type, in: ledger) < wanted, process.isRunning, Date() < deadline { usleep(2_000) }
        }
    }

    /// `serve`'s `/metrics` on `ledger`: the value of `handover_runs{command=COMMAND,state=STATE}`.
    static func runsGauge(_ ledger: String, command: String, state: String) throws -> String? {
        let server = try ServerProcess(["serve", "--ledger", ledger, "--port", "0"])
        defer { server.stop() }
        let metrics = try runCommand("/usr/bin/curl", ["-sf", server.baseURL + "/metrics"]).out
        let prefix = "handover_runs{command=\"\(command)\",state=\"\(state)\"} "
        return metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    /// The CSV at `path`, its lines sorted: the same users with the same values, whatever order.
    static func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: \.isNewline).map(String.init).sorted()
    }

    @Test(
        "a generate held by the stand-in after 40 of 200 users: without a terminal it logs its progress line (40/200); status says running (40 of 200), then, killed, stopped with exit 1 (and in /metrics); the command it prints resumes it, the output equals an uninterrupted run's, and status and /metrics are clear"
    )
    func generate() async throws {
        let t = try Teams(users: 200)
        defer { t.standIn.stop() }
        try await t.hold(after: 40)
        let process = try RunningProduct(
            "handover", ["generate", "--ledger", t.a, "--users", t.users, "--target", "BBBB222222", "--out", t.dir.sub("first.csv")],
            environment: t.teamA)
        try t.wait(for: 40, .transferIDGenerated, in: t.a, while: process)
        // Without a terminal (its standard error is a pipe), the run logs its progress line
        // every 10 seconds, held or not.
        let deadline = Date().addingTimeInterval(PhaseKill.deadline)
        while !process.errorOutput.contains(" progress: "), process.isRunning, Date() < deadline { usleep(100_000) }
        let logged = try #require(process.errorOutput.split(separator: "\n").first { $0.contains(" progress: ") }, "\(process.errorOutput)")
        #expect(
            logged.wholeMatch(of: /handover: \d{4}-\d\d-\d\dT[0-9:.]+Z progress: 40\/200 users  \d+\/s  ETA .+  failed 0  retried \d+.*/) != nil,
            "\(logged)")
        let resume = try StatusReading.heldThenKilled(process, ledger: t.a, command: "generate", done: 40, total: 200)
        #expect(resume.contains("--users \(t.users)") && resume.contains("--target BBBB222222"), "\(resume)")
        #expect(try Self.runsGauge(t.a, command: "generate", state: "stopped") == "1.0", "/metrics counts the stopped run, for the alert")

        try await t.release()
        let resumed = try PrintedCommand.run(resume, fill: ["HANDOFF.CSV": t.dir.sub("handoff.csv")], environment: t.teamA)
        #expect(resumed.status == 0, "\(resumed.command): \(resumed.out)\(resumed.err)")
        let after = try StatusReading(t.a)
        #expect(after.runs.isEmpty && after.status == 0, "the finished run clears it: \(after.text)")
        #expect(after.text.contains("last run:     generate, finished"), "\(after.text)")
        #expect(try Self.runsGauge(t.a, command: "generate", state: "stopped") == "0.0", "and no longer once it finished")

        try t.initLedger(t.dir.sub("a-once"), role: "sender")
        let once = try runProduct(
            "handover", ["generate", "--ledger", t.dir.sub("a-once"), "--users", t.users, "--target", "BBBB222222", "--out", t.dir.sub("once.csv")],
            environment: t.teamA)
        #expect(once.status == 0, "\(once.err)")
        #expect(try Self.lines(t.dir.sub("handoff.csv")) == Self.lines(t.dir.sub("once.csv")), "the same end as one uninterrupted run")
    }

    @Test(
        "an exchange of a signed package held after 30 of 150 users: status says running, then, killed, stopped with exit 1; the command it prints (the package, not its rows.csv) resumes it to an uninterrupted run's output"
    )
    func exchange() async throws {
        let t = try Teams(users: 150)
        defer { t.standIn.stop() }
        let generated = try runProduct(
            "handover", ["generate", "--ledger", t.a, "--users", t.users, "--target", "BBBB222222", "--out", t.dir.sub("handoff.csv")],
            environment: t.teamA)
        #expect(generated.status == 0, "\(generated.err)")
        let package = t.dir.sub("handoff-0001")
        #expect(try handover("handoff", "issue", "--ledger", t.a, "--target", "BBBB222222", "--out", package).status == 0)
        let key = t.dir.sub("sender.pub")
        try Data(try handover("checkpoint", "--public-key", "--ledger", t.a).out.utf8).write(to: URL(fileURLWithPath: key))
        #expect(try runCommand("/bin/cp", ["-a", t.b, t.dir.sub("b-once")]).status == 0)

        try await t.hold(after: 30)
        let process = try RunningProduct(
            "handover", ["exchange", "--ledger", t.b, "--transfers", package, "--sender-key", key, "--out", t.dir.sub("first.csv")],
            environment: t.teamB)
        try t.wait(for: 30, .transferIDExchanged, in: t.b, while: process)
        let resume = try StatusReading.heldThenKilled(process, ledger: t.b, command: "exchange", done: 30, total: 150)
        #expect(resume.contains("--transfers \(package) --sender-key SENDER.PUB"), "\(resume)")

        try await t.release()
        let resumed = try PrintedCommand.run(
            resume, fill: ["SENDER.PUB": key, "EXCHANGED.CSV": t.dir.sub("exchanged.csv")], environment: t.teamB)
        #expect(resumed.status == 0, "\(resumed.command): \(resumed.out)\(resumed.err)")
        let after = try StatusReading(t.b)
        #expect(after.runs.isEmpty, "the finished run clears it: \(after.text)")
        #expect(!after.concerns.contains { $0.contains("stopped without finishing") }, "\(after.concerns)")

        let once = try runProduct(
            "handover",
            ["exchange", "--ledger", t.dir.sub("b-once"), "--transfers", package, "--sender-key", key, "--out", t.dir.sub("once.csv")],
            environment: t.teamB)
        #expect(once.status == 0, "\(once.err)")
        #expect(try Self.lines(t.dir.sub("exchanged.csv")) == Self.lines(t.dir.sub("once.csv")), "the same end as one uninterrupted run")
    }

    @Test(
        "a receive of 30,000 rows stopped part way (SIGSTOP): status says running with fewer row chunks than the package's; killed, stopped with exit 1; the command it prints takes in the rest"
    )
    func receive() async throws {
        let big = try await HandoffReceiveTests.BigPackage(rows: 30_000)
        // Each round on a fresh copy: stopped once its first chunk is on disk; a round whose
        // receive finished first counts for nothing.
        var round = 0
        var landed = false
        while !landed, round < 20 {
            round += 1
            let b = big.dir.sub("b-\(round)")
            #expect(try runCommand("/bin/cp", ["-a", big.pristine, b]).status == 0)
            let process = try RunningProduct("handover", ["handoff", "receive", big.package, "--sender-key", big.key, "--ledger", b])
            let deadline = Date().addingTimeInterval(PhaseKill.deadline)
            func chunks() throws -> Int { try HandoffReceiveTests.recorded(b).chunks.count }
            while process.isRunning, try chunks() == 0, Date() < deadline { usleep(500) }
            process.signal(SIGSTOP)
            let recorded = try chunks()
            guard process.isRunning, recorded < big.chunkCount else {
                process.signal(SIGCONT)
                _ = process.wait()
                continue
            }
            landed = true
            let resume = try StatusReading.heldThenKilled(process, ledger: b, command: "receive", done: recorded * 1_024, total: 30_000)
            let stopped = try StatusReading(b)
            let run = try #require(stopped.runs.first)
            #expect(run["chunks_recorded"] as? Int == recorded && run["chunks"] as? Int == big.chunkCount, "\(run)")
            #expect(stopped.text.contains("(\(recorded) of \(big.chunkCount) row chunks)"), "\(stopped.text)")
            #expect(resume.contains("handoff receive \(big.package)") && resume.contains("--sender-key SENDER.PUB"), "\(resume)")
            let resumed = try PrintedCommand.run(resume, fill: ["SENDER.PUB": big.key])
            #expect(resumed.status == 0, "\(resumed.command): \(resumed.out)\(resumed.err)")
            try HandoffReceiveTests.expectWhole(b, total: 30_000, chunkCount: big.chunkCount)
            let after = try StatusReading(b)
            #expect(after.runs.isEmpty, "every row in: \(after.text)")
        }
        #expect(landed, "in \(round) rounds, no receive was stopped while it recorded its chunks")
    }
}
