import AppleID
import AppleSimulator
import Basics
import Foundation
import Ledger
import LogEngine
import Migration
import Projections
import TestSupport
import Testing

/// Both teams' runs against the stand-in over real loopback HTTP, with real ledgers.
@Suite("migration runs against the Apple stand-in")
struct MigrationRunTests {
    let dir = TemporaryDirectory()

    @Test("generate, hand off, exchange: the output joins back to the sender's account IDs, and no secret reaches the ledger")
    func bothTeams() async throws {
        let fixture = try await AppleFixture.start(in: dir) { try $0.revoke([AppleFixture.sub(7)]) }
        let a = try await fixture.ledger(.sender)
        let b = try await fixture.ledger(.recipient)
        let users = try fixture.usersFile(200)
        let handoff = fixture.path + "/handoff.csv"
        let exchanged = fixture.path + "/exchanged.csv"

        let generated = try await fixture.job(.generate(target: AppleFixture.recipientTeam), ledger: a, input: users, output: handoff).execute(
            logger: fixture.logger)
        #expect(generated.succeeded == 199 && generated.failed == 1 && generated.exitStatus == .failed)
        let handoffCSV = try AppleFixture.readCSV(handoff)
        #expect(handoffCSV.header == ["account_id", "transfer_sub"])
        #expect(handoffCSV.rows.count == 199 && !handoffCSV.rows.contains { $0["account_id"] == "acct-7" })

        let result = try await fixture.job(.exchange, ledger: b, input: handoff, output: exchanged).execute(logger: fixture.logger)
        #expect(result.succeeded == 199 && result.failed == 0 && result.exitStatus == .success)
        let out = try AppleFixture.readCSV(exchanged)
        #expect(out.header == ["account_id", "transfer_sub", "recipient_sub", "email", "is_private_email"])
        let transferByAccount = Dictionary(uniqueKeysWithValues: handoffCSV.rows.map { ($0["account_id"] ?? "", $0["transfer_sub"] ?? "") })
        #expect(out.rows.count == 199)
        for row in out.rows {
            #expect(
                transferByAccount[row["account_id"] ?? ""] == row["transfer_sub"], "account \(row["account_id"] ?? "-") joins to its transfer_sub")
            #expect(row["recipient_sub"]?.hasPrefix("001") == true)
        }
        #expect(Set(out.rows.compactMap { $0["recipient_sub"] }).count == 199, "every user gets a distinct sub")
        #expect(out.rows.contains { $0["is_private_email"] == "true" && $0["email"]?.hasSuffix("@privaterelay.appleid.com") == true })

        // The same transfer_sub exchanged twice gives the same sub (Apple's rule), and a
        // re-run records nothing new for users already done.
        let again = try await fixture.job(.exchange, ledger: b, input: handoff, output: exchanged).execute(logger: fixture.logger)
        #expect(again.alreadyDone == 199 && again.succeeded == 0)
        #expect(try AppleFixture.readCSV(exchanged).rows == out.rows)
        #expect(try AppleFixture.events(.transferIDExchanged, in: b).count == 199)

        // No client secret (found by its header), private key, access token or email in either ledger.
        let pem = try String(contentsOfFile: fixture.apple.path + "/keys/AuthKey_KEYB222222.p8", encoding: .utf8)
        let keyLine = try #require(pem.split(separator: "\n").first { !$0.hasPrefix("-----") })
        let rawKey = fixture.recipient.privateKey.rawRepresentation
        for ledger in [a, b] {
            for kid in ["KEYA111111", "KEYB222222"] {
                let header = Base64URL.encode(Data(#"{"alg":"ES256","kid":"\#(kid)"}"#.utf8))
                #expect(try !filesContain(ledger, String(header.prefix(30))), "no client secret in \(ledger)")
            }
            #expect(try !filesContain(ledger, String(keyLine.prefix(40))))
            #expect(try !filesContain(ledger, bytes: Array(rawKey)))
            #expect(
                try !filesContain(ledger, ".\(AppleFixture.senderTeam).\(Base64URL.encode(Data(AppleFixture.clientID.utf8)))."), "no access token")
            #expect(
                try !filesContain(ledger, ".\(AppleFixture.recipientTeam).\(Base64URL.encode(Data(AppleFixture.clientID.utf8)))."), "no access token")
        }
        let email = try #require(out.rows.lazy.compactMap { $0["email"] }.first { !$0.isEmpty })
        #expect(try !filesContain(b, email))
        await fixture.simulator.stop()
    }

    @Test("a token shorter than the run is refreshed before it expires, without a failed call")
    func tokenRefresh() async throws {
        // Apple's hour-long tokens are renewed 5 minutes before expiry. Here 16 s tokens are
        // renewed with 12 s left: each serves 4 s, and a call would have to spend 12 s between
        // taking its token and reaching the stand-in to arrive with an expired one (on a busy
        // machine 6 s was seen).
        #expect(TokenRenewal().margin(lifetime: 3600) == 300 && TokenRenewal().margin(lifetime: 60) == 12)
        var rules = SimulatedApple.Rules()
        rules.tokenLifetime = 16
        var faults = FaultInjection()
        faults.latencyMilliseconds = 25
        let fixture = try await AppleFixture.start(rules: rules, faults: faults, in: dir)
        let a = try await fixture.ledger(.sender)
        var job = fixture.job(
            .generate(target: AppleFixture.recipientTeam), ledger: a, input: try fixture.usersFile(200), output: fixture.path + "/out.csv")
        job.options.concurrency = 1
        job.tokenRenewal = TokenRenewal(fraction: 0.75)
        let summary = try await job.execute(logger: fixture.logger)
        #expect(summary.succeeded == 200 && summary.failed == 0 && summary.retries == 0)
        #expect(summary.tokensIssued >= 2, "a token renewed after 4 s, over a run of at least 5 s (200 calls of 25 ms), is renewed")
        let stats = fixture.simulator.server.stats.snapshot
        #expect(stats["usermigrationinfo.invalid_token"] == nil, "no call was made with an expired token: \(stats)")
        #expect(stats["usermigrationinfo.200"] == 200)
        let issued = try AppleFixture.events(.accessTokenIssued, in: a)
        #expect(issued.count == summary.tokensIssued)
        await fixture.simulator.stop()
    }

    @Test("429, 500 and dropped connections are retried until they succeed")
    func transientFaults() async throws {
        var faults = FaultInjection()
        // 25% of calls fail in all: with 10 attempts a user fails for good about once in a
        // million, while 300 users still meet each fault many times.
        faults.rateLimitedFraction = 0.1
        faults.retryAfterSeconds = 0
        faults.serverErrorFraction = 0.1
        faults.droppedFraction = 0.05
        let fixture = try await AppleFixture.start(faults: faults, in: dir)
        let a = try await fixture.ledger(.sender)
        let summary = try await fixture.job(
            .generate(target: AppleFixture.recipientTeam), ledger: a, input: try fixture.usersFile(300), output: fixture.path + "/out.csv"
        ).execute(logger: fixture.logger)
        let stats = fixture.simulator.server.stats.snapshot
        #expect(summary.succeeded == 300 && summary.failed == 0, "\(summary.text)")
        #expect(
            (stats["usermigrationinfo.429"] ?? 0) > 0 && (stats["usermigrationinfo.500"] ?? 0) > 0 && (stats["usermigrationinfo.dropped"] ?? 0) > 0,
            "\(stats)")
        #expect(summary.retries >= (stats["usermigrationinfo.429"] ?? 0) + (stats["usermigrationinfo.500"] ?? 0))
        await fixture.simulator.stop()
    }

    @Test("invalid_request is recorded for that user and the others complete; --retry-failed tries it again")
    func perUserFailure() async throws {
        let fixture = try await AppleFixture.start(in: dir) { try $0.revoke([AppleFixture.sub(3), AppleFixture.sub(11)]) }
        let a = try await fixture.ledger(.sender)
        let users = try fixture.usersFile(50)
        let first = try await fixture.job(.generate(target: AppleFixture.recipientTeam), ledger: a, input: users, output: fixture.path + "/out.csv")
            .execute(logger: fixture.logger)
        #expect(first.succeeded == 48 && first.failed == 2 && first.failuresByClass == ["invalid_request": 2] && first.exitStatus == .failed)
        let failures = try AppleFixture.events(.transferIDGenerationFailed, in: a)
        #expect(Set(failures.compactMap { $0.identifiers.senderSub }) == [AppleFixture.sub(3), AppleFixture.sub(11)])
        guard case .transferIDGenerationFailed(let body) = failures[0].body else {
            Issue.record("wrong type")
            return
        }
        #expect(body.failure.kind == .invalidRequest && body.failure.httpStatus == 400 && body.failure.code == "invalid_request")

        let second = try await fixture.job(.generate(target: AppleFixture.recipientTeam), ledger: a, input: users, output: fixture.path + "/out.csv")
            .execute(logger: fixture.logger)
        #expect(second.alreadyDone == 48 && second.skippedFailed == 2 && second.succeeded + second.failed == 0)
        var retry = fixture.job(.generate(target: AppleFixture.recipientTeam), ledger: a, input: users, output: fixture.path + "/out.csv")
        retry.options.retryFailed = true
        let third = try await retry.execute(logger: fixture.logger)
        #expect(third.failed == 2 && third.alreadyDone == 48)
        await fixture.simulator.stop()
    }

    @Test("invalid_client stops the run with exit status 3 and names the likely causes")
    func invalidClient() async throws {
        let fixture = try await AppleFixture.start(in: dir)
        let a = try await fixture.ledger(.sender)
        let wrong = AppleCredentials(
            teamID: AppleFixture.senderTeam, clientID: AppleFixture.clientID, keyID: "WRONGKEY01", privateKey: fixture.sender.privateKey)
        let summary = try await fixture.job(
            .generate(target: AppleFixture.recipientTeam), ledger: a, input: try fixture.usersFile(100), output: fixture.path + "/out.csv",
            credentials: wrong
        )
        .execute(logger: fixture.logger)
        #expect(summary.exitStatus == .credentialsRefused && summary.succeeded == 0 && summary.failed == 0 && summary.notAttempted == 100)
        let stopped = try #require(summary.stoppedBy)
        #expect(stopped.kind == .invalidClient && stopped.message.contains("key ID") && stopped.message.contains("DER"))
        #expect(fixture.simulator.server.stats.snapshot["usermigrationinfo.200"] == nil)
        let finished = try #require(try AppleFixture.events(.runFinished, in: a).last)
        guard case .runFinished(let body) = finished.body else {
            Issue.record("wrong type")
            return
        }
        #expect(body.exitStatus == 3 && body.stoppedBy?.kind == .invalidClient)
        #expect(try AppleFixture.events(.accessTokenFailed, in: a).count == 1)
        await fixture.simulator.stop()
    }

    @Test("the sender's own team as target and a closed window are refused before any call")
    func guards() async throws {
        let fixture = try await AppleFixture.start(in: dir)
        let a = try await fixture.ledger(.sender, acceptedAt: Timestamp.now().adding(days: -61))
        let users = try fixture.usersFile(10)
        let before = try Ledger.open(at: a).read { try $0.eventCount() }
        await #expect(throws: RunRefused.self) {
            _ = try await fixture.job(.generate(target: AppleFixture.senderTeam), ledger: a, input: users, output: fixture.path + "/o.csv").execute(
                logger: fixture.logger)
        }
        do {
            _ = try await fixture.job(.generate(target: AppleFixture.recipientTeam), ledger: a, input: users, output: fixture.path + "/o.csv")
                .execute(logger: fixture.logger)
            Issue.record("a closed window was not refused")
        } catch let refused as RunRefused {
            #expect(refused.description.contains("transfers the app back"))
        }
        // An exchange on the sender's ledger is refused when it is opened, before anything is changed.
        let transfers = try fixture.write("transfer_sub\nabc.def\n", "transfers.csv")
        let wrongRole = await #expect(throws: LedgerError.self) {
            _ = try await fixture.job(.exchange, ledger: a, input: transfers, output: fixture.path + "/o.csv").execute(logger: fixture.logger)
        }
        #expect(
            wrongRole?.code == .wrongRole
                && wrongRole?.message.hasSuffix("`handover exchange` is run by the recipient team, on its own ledger") == true)
        #expect(fixture.simulator.server.stats.snapshot.isEmpty, "no call reached Apple")
        #expect(try Ledger.open(at: a).read { try $0.eventCount() } == before, "nothing was recorded")
        #expect(!FileManager.default.fileExists(atPath: fixture.path + "/o.csv"))
        await fixture.simulator.stop()
    }
}
