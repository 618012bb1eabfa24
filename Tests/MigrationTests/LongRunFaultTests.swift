import AppleID
import AppleSimulator
import Basics
import Foundation
import Intake
import Ledger
import Migration
import Projections
import TestSupport
import Testing

/// What a long migration meets: a token Apple stops taking, users who signed in before the
/// exchange reached them, a dry run asked for a forecast, and the personal data in its output.
@Suite("long runs: a refused token, users done by sign-in, dry runs, personal data in outputs")
struct LongRunFaultTests {
    let dir = TemporaryDirectory()

    /// A handoff file of `count` users: team A's generate run, through the stand-in.
    private func handoff(_ fixture: AppleFixture, _ count: Int) async throws -> String {
        let a = try await fixture.ledger(.sender)
        let handoff = fixture.path + "/handoff.csv"
        let generated = try await fixture.job(
            .generate(target: AppleFixture.recipientTeam), ledger: a, input: try fixture.usersFile(count), output: handoff
        )
        .execute(logger: fixture.logger)
        try #require(generated.succeeded == count)
        return handoff
    }

    @Test(
        "a token Apple refuses (401) mid-run is renewed once and the run finishes with every user migrated; refused again at once, the run stops with exit 3"
    )
    func refusedToken() async throws {
        var faults = FaultInjection()
        faults.tokenRevocation = .once(afterCalls: 300)
        let fixture = try await AppleFixture.start(faults: faults, in: dir)
        let handoff = try await handoff(fixture, 200)
        let b = try await fixture.ledger(.recipient)
        var job = fixture.job(.exchange, ledger: b, input: handoff, output: fixture.path + "/exchanged.csv")
        job.options.concurrency = 8
        let summary = try await job.execute(logger: fixture.logger)
        #expect(summary.exitStatus == .success && summary.succeeded == 200 && summary.failed == 0, "\(summary.text)")
        let stats = fixture.simulator.server.stats.snapshot
        #expect((stats["usermigrationinfo.invalid_token"] ?? 0) >= 1, "the revoked token was refused: \(stats)")
        #expect(summary.tokensIssued == 2, "one token, then one renewal however many calls met the refusal")
        #expect(try AppleFixture.events(.accessTokenIssued, in: b).count == 2)
        await fixture.simulator.stop()

        // Every token refused from some point (after the generation's 200 calls and 50 of the
        // exchange's): renewing once does not help, and the run stops.
        var always = FaultInjection()
        always.tokenRevocation = .always(afterCalls: 250)
        let again = try await AppleFixture.start(faults: always, in: TemporaryDirectory())
        let users = try await self.handoff(again, 200)
        let b2 = try await again.ledger(.recipient)
        let stopped = try await again.job(.exchange, ledger: b2, input: users, output: again.path + "/exchanged.csv").execute(logger: again.logger)
        // How many users were done before the refusals began depends on the machine's pace (a
        // busy machine's timeouts are retried, and each try counts as a call); what holds is that
        // the run stopped part-way and every user it counts has its event.
        let answered = (again.simulator.server.stats.snapshot["usermigrationinfo.200"] ?? 0) - 200
        #expect(stopped.exitStatus == .credentialsRefused && stopped.succeeded < 200 && stopped.succeeded <= answered, "\(stopped.text)")
        #expect(try AppleFixture.events(.transferIDExchanged, in: b2).count == stopped.succeeded, "every user counted is in the ledger")
        #expect(stopped.stoppedBy?.kind == .other || stopped.stoppedBy?.code == "invalid_token", "\(String(describing: stopped.stoppedBy))")
        #expect(stopped.text.contains("refused a new access token right after refusing the one before"), "\(stopped.text)")
        #expect(stopped.tokensIssued >= 2)
        await again.simulator.stop()
    }

    @Test(
        "with users failed earlier and users who signed in with their transfer_sub, the dry run's forecast is the real run's exit status, and no call is made for those who signed in"
    )
    func dryRunAndSignIns() async throws {
        let fixture = try await AppleFixture.start(in: dir)
        let handoff = try await handoff(fixture, 60)
        let transferSubs = try AppleFixture.readCSV(handoff).rows.compactMap { $0["transfer_sub"] }
        await fixture.simulator.stop()

        // Team B: 5 users refused (they revoked consent), then 10 others sign in with their transfer_sub.
        try fixture.apple.revoke(Array(transferSubs[0..<5]))
        let refusing = try await RunningSimulator(SimulatorServer(directory: fixture.apple, rules: .init(), faults: .init(), logger: fixture.logger))
        let b = try await fixture.ledger(.recipient)
        var first = fixture.job(
            .exchange, ledger: b, input: try fixture.write("transfer_sub\n" + transferSubs[0..<5].joined(separator: "\n") + "\n", "first.csv"),
            output: fixture.path + "/first-out.csv")
        first.endpoints = AppleEndpoints(baseURL: refusing.baseURL)
        #expect(try await first.execute(logger: fixture.logger).failed == 5)
        await refusing.stop()
        try FileManager.default.removeItem(atPath: fixture.apple.revokedPath)
        try await signIn(transferSubs[10..<20], into: b, apple: fixture.apple)

        // Every call succeeds now (the stand-in below refuses nobody).
        let standIn = try await RunningSimulator(SimulatorServer(directory: fixture.apple, rules: .init(), faults: .init(), logger: fixture.logger))
        func job(retrying: Bool, dryRun: Bool) -> MigrationJob {
            var job = fixture.job(.exchange, ledger: b, input: handoff, output: fixture.path + "/exchanged.csv")
            job.endpoints = AppleEndpoints(baseURL: standIn.baseURL)
            job.options.retryFailed = retrying
            job.options.dryRun = dryRun
            return job
        }
        // Without --retry-failed the 5 refused users stay not done: the forecast and the run say 1.
        let forecast = try await job(retrying: false, dryRun: true).execute(logger: fixture.logger)
        #expect(
            forecast.doneBySignIn == 10 && forecast.notAttempted == 45 && forecast.skippedFailed == 5 && forecast.exitStatus == .success,
            "\(forecast.text)")
        #expect(forecast.text.contains("done by signing in with their transfer_sub (no call needed): 10"), "\(forecast.text)")
        #expect(forecast.text.contains("a real run, if every call succeeds, ends with exit status 1"), "\(forecast.text)")
        let calls = standIn.server.stats.snapshot["usermigrationinfo.200"] ?? 0
        let real = try await job(retrying: false, dryRun: false).execute(logger: fixture.logger)
        #expect(real.exitStatus == forecast.realRunExitStatus, "\(real.text)")
        #expect(real.succeeded == 45 && real.doneBySignIn == 10 && real.skippedFailed == 5)
        #expect((standIn.server.stats.snapshot["usermigrationinfo.200"] ?? 0) - calls == 45, "no call for the 10 who signed in")

        // With --retry-failed every user would be done: both say 0.
        let retryForecast = try await job(retrying: true, dryRun: true).execute(logger: fixture.logger)
        #expect(retryForecast.notAttempted == 5 && retryForecast.text.contains("ends with exit status 0"), "\(retryForecast.text)")
        let retried = try await job(retrying: true, dryRun: false).execute(logger: fixture.logger)
        #expect(
            retried.exitStatus == retryForecast.realRunExitStatus && retried.succeeded == 5 && retried.alreadyDone == 45
                && retried.doneBySignIn == 10, "\(retried.text)")
        let out = try AppleFixture.readCSV(fixture.path + "/exchanged.csv")
        #expect(out.rows.count == 60, "every user in the output, those who signed in with the sub they signed in with")
        let signedIn = Set(transferSubs[10..<20])
        #expect(
            out.rows.filter { signedIn.contains($0["transfer_sub"] ?? "") }.allSatisfy { $0["recipient_sub"]?.hasPrefix("001.signed-in.") == true })
        #expect(try AppleFixture.events(.transferIDExchanged, in: b).count == 50)
        await standIn.stop()
    }

    @Test("the exchange's output holding emails is mode 0600, and the one written after an erasure holds no address of the erased user")
    func personalDataOutput() async throws {
        let fixture = try await AppleFixture.start(in: dir)
        let handoff = try await handoff(fixture, 30)
        let b = try await fixture.ledger(.recipient)
        let output = fixture.path + "/exchanged.csv"
        _ = try await fixture.job(.exchange, ledger: b, input: handoff, output: output).execute(logger: fixture.logger)
        let mode = try FileManager.default.attributesOfItem(atPath: output)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let row = try #require(AppleFixture.readCSV(output).rows.first { !($0["email"] ?? "").isEmpty })
        let erased = try runProduct("handover", ["erase", try #require(row["recipient_sub"]), "--ledger", b])
        #expect(erased.status == 0, "\(erased.err)")
        _ = try await fixture.job(.exchange, ledger: b, input: handoff, output: output).execute(logger: fixture.logger)
        let text = try String(contentsOfFile: output, encoding: .utf8)
        #expect(!text.contains(try #require(row["email"])), "the erased user's address is gone from the output")
        #expect(try AppleFixture.readCSV(output).rows.count == 30)
        await fixture.simulator.stop()
    }

    /// Records an identity token for each `transfer_sub`, as the app backend reports a sign-in.
    private func signIn(_ transferSubs: ArraySlice<String>, into ledgerPath: String, apple: SimulatorDirectory) async throws {
        let minter = try TokenMinter(key: apple.signingKey())
        let projection = UserProjection()
        let ledger = try Ledger.open(at: ledgerPath, folders: [projection])
        defer { ledger.close() }
        let intake = try AppleIntake(
            ledger: ledger, projection: projection, keys: AppleKeySet(.fixed(try await JSONWebKeySet(json: Data(minter.jwks().utf8)))))
        for (i, transferSub) in transferSubs.enumerated() {
            let token = try await minter.identityToken(
                audience: AppleFixture.clientID, sub: "001.signed-in.\(i)", transferSub: transferSub, issuedAt: Timestamp.now().seconds)
            let receipt = try await intake.receiveSignIn(token)
            try #require(receipt.rejection == nil, "\(receipt.rejection?.description ?? "")")
        }
    }
}
