import AppleID
import AppleSimulator
import Foundation
import Ledger
import TestSupport
import Testing

@testable import Migration

/// `handover preflight` against the stand-in over loopback HTTP: ready in two calls with good
/// credentials; each credential mistake Apple can only answer `invalid_client` for is exit 3
/// with the list of causes and the stand-in's own reason; local problems are exit 2 before any
/// token is asked for.
@Suite("preflight")
struct PreflightTests {
    let dir = TemporaryDirectory()

    private func preflight(
        _ fixture: AppleFixture, ledger: String, team: String = AppleFixture.senderTeam, client: String = AppleFixture.clientID,
        keyID: String? = nil, keyPath: String? = nil, input: String? = nil
    ) async -> PreflightReport {
        let credentials = Preflight.Credentials(
            teamID: team, clientID: client, keyID: keyID ?? fixture.sender.keyID,
            privateKeyPath: keyPath ?? fixture.path + "/apple/keys/AuthKey_\(fixture.sender.keyID).p8")
        var preflight = Preflight(ledgerDirectory: ledger, credentials: credentials, endpoints: fixture.endpoints)
        preflight.inputPath = input
        return await preflight.run(logger: fixture.logger)
    }

    private func verdict(_ report: PreflightReport, _ name: String) -> PreflightCheck.Verdict? {
        report.checks.first { $0.name == name }?.verdict
    }

    @Test("good credentials: every check passes in two calls to Apple (its clock, one token), and the token is recorded as a run records it")
    func ready() async throws {
        let fixture = try await AppleFixture.start(in: dir)
        let a = try await fixture.ledger(.sender)
        let report = await preflight(fixture, ledger: a, input: try fixture.usersFile(20))
        #expect(report.exitStatus == .success, "\(report.text)")
        #expect(report.checks.allSatisfy { $0.verdict == .passed }, "\(report.text)")
        let stats = fixture.simulator.server.stats.snapshot
        #expect(stats.values.reduce(0, +) == 2 && stats["token.200"] == 1 && stats["keys.200"] == 1, "\(stats)")
        #expect(try AppleFixture.events(.accessTokenIssued, in: a).count == 1)
        #expect(report.text.hasSuffix("ready: every check passed"))
        await fixture.simulator.stop()
    }

    @Test(
        "a wrong key ID, team ID or client ID: exit 3, the causes Apple cannot tell apart, and the stand-in's reason",
        arguments: ["key", "team", "client"])
    func refusedCredentials(_ wrong: String) async throws {
        let fixture = try await AppleFixture.start(in: dir)
        // A mistake made the same way in the ledger: the local checks cannot see it.
        let team = wrong == "team" ? "CCCC333333" : AppleFixture.senderTeam
        let client = wrong == "client" ? "com.example.other" : AppleFixture.clientID
        let ledger = dir.sub("ledger-\(wrong)")
        let created = try await Ledger.create(
            at: ledger, LedgerCreated(teamID: team, clientIDs: [client], role: .sender, ledgerID: UUID().uuidString))
        created.close()
        let report = await preflight(fixture, ledger: ledger, team: team, client: client, keyID: wrong == "key" ? "KEYZ999999" : nil)
        #expect(report.exitStatus == .credentialsRefused, "\(report.text)")
        let line = report.checks.first { $0.name == "access token" }?.detail ?? ""
        let reason = ["key": "kid is not the team's key ID", "team": "iss names no registered team", "client": "client_id is not one of the team's"][
            wrong]!
        #expect(line.contains("invalid_client") && line.contains(reason), "\(line)")
        for cause in Preflight.invalidClientCauses { #expect(line.contains(cause), "\(cause) missing from: \(line)") }
        #expect(line.contains("Already ruled out here"))
        #expect(try AppleFixture.events(.accessTokenFailed, in: ledger).count == 1)
        await fixture.simulator.stop()
    }

    @Test("--test-user generates one transfer identifier, recorded as a run of one user; a user who revoked consent is Apple's refusal, exit 3")
    func testUser() async throws {
        let fixture = try await AppleFixture.start(in: dir) { try $0.revoke([AppleFixture.sub(7)]) }
        let a = try await fixture.ledger(.sender)
        func run(_ sub: String) async -> PreflightReport {
            var preflight = Preflight(
                ledgerDirectory: a,
                credentials: Preflight.Credentials(
                    teamID: AppleFixture.senderTeam, clientID: AppleFixture.clientID, keyID: fixture.sender.keyID,
                    privateKeyPath: fixture.path + "/apple/keys/AuthKey_\(fixture.sender.keyID).p8"), endpoints: fixture.endpoints)
            preflight.testUser = sub
            preflight.target = AppleFixture.recipientTeam
            return await preflight.run(logger: fixture.logger)
        }
        let good = await run(AppleFixture.sub(1))
        #expect(good.exitStatus == .success && verdict(good, "test user") == .passed, "\(good.text)")
        let generated = try AppleFixture.events(.transferIDGenerated, in: a)
        #expect(generated.count == 1 && generated.first?.identifiers.senderSub == AppleFixture.sub(1))
        #expect(try AppleFixture.events(.runStarted, in: a).count == 1)
        let revoked = await run(AppleFixture.sub(7))
        #expect(revoked.exitStatus == .credentialsRefused && verdict(revoked, "test user") == .refused, "\(revoked.text)")
        #expect(revoked.checks.first { $0.name == "test user" }?.detail.contains("invalid_request") == true)
        await fixture.simulator.stop()
    }

    @Test("a malformed key file: exit 2, named, and Apple is not asked for a token")
    func malformedKey() async throws {
        let fixture = try await AppleFixture.start(in: dir)
        let a = try await fixture.ledger(.sender)
        let key = try fixture.write("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n", "AuthKey_\(fixture.sender.keyID).p8")
        let report = await preflight(fixture, ledger: a, keyPath: key)
        #expect(
            report.exitStatus == .usage && verdict(report, "private key") == .failed && verdict(report, "access token") == .skipped, "\(report.text)")
        #expect(fixture.simulator.server.stats.snapshot["token.200"] == nil)
        await fixture.simulator.stop()
    }

    @Test("team B's credentials on team A's ledger: exit 2, naming both teams, and no token asked for")
    func roleMismatch() async throws {
        let fixture = try await AppleFixture.start(in: dir)
        let a = try await fixture.ledger(.sender)
        let report = await preflight(
            fixture, ledger: a, team: AppleFixture.recipientTeam, keyID: fixture.recipient.keyID,
            keyPath: fixture.path + "/apple/keys/AuthKey_\(fixture.recipient.keyID).p8")
        #expect(
            report.exitStatus == .usage && verdict(report, "credentials") == .failed && verdict(report, "access token") == .skipped, "\(report.text)")
        let line = report.checks.first { $0.name == "credentials" }?.detail ?? ""
        #expect(line.contains(AppleFixture.recipientTeam) && line.contains(AppleFixture.senderTeam))
        await fixture.simulator.stop()
    }

    @Test(
        "a disk without room for the run over the input: exit 2, saying how much it needs",
        .enabled(if: SmallDisk.canMount, "needs to mount a tmpfs (root, and a container that allows mount); skipped here"))
    func fullDisk() async throws {
        let fixture = try await AppleFixture.start(in: dir)
        let mountPoint = dir.sub("small")
        try #require(try SmallDisk.mount(size: "8m", at: mountPoint))
        defer { SmallDisk.unmount(mountPoint) }
        let ledger = mountPoint + "/a"
        let created = try await Ledger.create(
            at: ledger, LedgerCreated(teamID: AppleFixture.senderTeam, clientIDs: [AppleFixture.clientID], role: .sender, ledgerID: UUID().uuidString)
        )
        created.close()
        let report = await preflight(fixture, ledger: ledger, input: try fixture.usersFile(2_000))
        #expect(report.exitStatus == .usage && verdict(report, "disk") == .failed, "\(report.text)")
        #expect(report.checks.first { $0.name == "disk" }?.detail.contains("2000 users needs about") == true, "\(report.text)")
        await fixture.simulator.stop()
    }
}
