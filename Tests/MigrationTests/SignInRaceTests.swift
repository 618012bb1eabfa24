import AsyncHTTPClient
import Foundation
import Ledger
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// The sign-in race: team B receives team A's package before any exchange, so a user who signs
/// in meanwhile is linked to their account instead of becoming a new one. Each step is a
/// `handover` process; the identity tokens are minted by the stand-in.
@Suite("the sign-in race, won by receiving the package first", .serialized)
struct SignInRaceTests {
    static let secret = "a-bearer-secret-for-the-app-backend"

    /// One row of a package's `rows.csv`.
    struct PackageRow { let accountID: String, transferSub: String }

    static func rows(of package: String) throws -> [PackageRow] {
        let text = try String(contentsOfFile: package + "/rows.csv", encoding: .utf8)
        return text.split(separator: "\r\n").dropFirst().map { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return PackageRow(accountID: fields[0], transferSub: fields[1])
        }
    }

    /// An identity token for team B's app, minted by the stand-in.
    static func token(_ teams: TwoTeamsOnTheCommandLine, sub: String, transferSub: String?) throws -> String {
        let minted = try handover(
            ["simulator", "mint-identity-token", "--dir", teams.apple, "--client-id", "com.example.app", "--sub", sub]
                + (transferSub.map { ["--transfer-sub", $0] } ?? []))
        guard minted.status == 0 else { throw ServerProcess.Failed(description: "mint-identity-token: \(minted.err)") }
        return minted.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A request to `serve` with the bearer secret; the answer's status and JSON members.
    static func call(_ url: String, post body: String? = nil) async throws -> (status: UInt, json: [String: Any]) {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(secret)")
        if let body {
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (response.status.code, try JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any] ?? [:])
    }

    /// `handover lookup ID --format json` on team B's ledger.
    static func lookup(_ teams: TwoTeamsOnTheCommandLine, _ id: String) throws -> (status: Int32, json: [String: Any]) {
        let answered = try handover("lookup", id, "--ledger", teams.recipient, "--format", "json")
        return (answered.status, try JSONSerialization.jsonObject(with: Data(answered.out.utf8)) as? [String: Any] ?? [:])
    }

    /// The members an answer has beyond the delivery's own (`status`, `sequence`, `error`).
    static func userMembers(_ json: [String: Any]) -> NSDictionary {
        NSDictionary(dictionary: json.filter { !["status", "sequence", "error"].contains($0.key) })
    }

    @Test("a received package's user who signs in is told their account_id; the exchange then skips them and B's ledger alone carries the account_id")
    func signInBeforeTheExchange() async throws {
        let f = try SignedHandoffTests.Fixture(users: 12)
        let teams = f.teams
        let rows = try Self.rows(of: f.package)
        #expect(rows.count == 12)

        let received = try handover("handoff", "receive", f.package, "--sender-key", f.senderKey, "--ledger", teams.recipient)
        #expect(received.status == 0, "\(received.err)")
        #expect(received.out.contains("rows: 12 users handed over; 1 chunk recorded now"), "\(received.out)")
        // Every user of the package is known on B's side before any call, as received.
        let before = try Self.lookup(teams, rows[3].transferSub)
        #expect(
            before.status == 0 && before.json["account_id"] as? String == rows[3].accountID && before.json["state"] as? String == "received"
                && before.json["package"] as? Int == 1 && before.json["correlated"] as? Bool == true, "\(before.json)")
        let pending = try handover("query", "pending", "--ledger", teams.recipient, "--format", "csv")
        #expect(pending.out.split(whereSeparator: \.isNewline).count == 13 && pending.out.contains(rows[3].transferSub), "\(pending.out)")
        // The stand-in has been asked nothing by team B.
        #expect(try await teams.standInAnswers().keys.allSatisfy { !$0.hasPrefix("usermigrationinfo") || $0 == "usermigrationinfo.200" })
        let generatedCalls = try await teams.standInAnswers()["usermigrationinfo.200"] ?? 0

        try Data(Self.secret.utf8).write(to: URL(fileURLWithPath: teams.dir.sub("secret")))
        let serve = try ServerProcess([
            "serve", "--ledger", teams.recipient, "--port", "0", "--jwks-url", teams.standIn.baseURL + "/auth/keys",
            "--sign-in-secret-file", teams.dir.sub("secret"),
        ])
        let signer = rows[3]
        let token = try Self.token(teams, sub: "001999.b.0003", transferSub: signer.transferSub)
        let signedIn = try await Self.call(serve.baseURL + "/apple/sign-ins", post: "{\"identity_token\":\"\(token)\"}")
        #expect(signedIn.status == 200 && signedIn.json["status"] as? String == "recorded", "\(signedIn.json)")
        #expect(
            signedIn.json["correlated"] as? Bool == true && signedIn.json["account_id"] as? String == signer.accountID
                && signedIn.json["package"] as? Int == 1
                && signedIn.json["state"] as? String == "migrated" && signedIn.json["migrated_via"] as? String == "sign-in"
                && signedIn.json["recipient_sub"] as? String == "001999.b.0003" && signedIn.json["transfer_sub"] as? String == signer.transferSub,
            "\(signedIn.json)")
        // The lookups answer the same, and so does the command line.
        let byTransferSub = try await Self.call(serve.baseURL + "/v1/transfer-subs/" + signer.transferSub)
        let bySub = try await Self.call(serve.baseURL + "/v1/subs/001999.b.0003")
        #expect(byTransferSub.status == 200 && bySub.status == 200)
        #expect(Self.userMembers(byTransferSub.json) == Self.userMembers(signedIn.json), "\(byTransferSub.json) against \(signedIn.json)")
        #expect(Self.userMembers(bySub.json) == Self.userMembers(signedIn.json))
        // A user team A did not hand over: recorded, and not correlated.
        let strangerToken = try Self.token(teams, sub: "001999.b.9999", transferSub: "000999.stranger.0001")
        let stranger = try await Self.call(serve.baseURL + "/apple/sign-ins", post: "{\"identity_token\":\"\(strangerToken)\"}")
        #expect(
            stranger.status == 200 && stranger.json["correlated"] as? Bool == false && stranger.json["reason"] as? String == "not-handed-over"
                && stranger.json["account_id"] == nil, "\(stranger.json)")
        let unknown = try await Self.call(serve.baseURL + "/v1/transfer-subs/000000.never.0000")
        #expect(
            unknown.status == 404 && unknown.json["correlated"] as? Bool == false && unknown.json["reason"] as? String == "not-handed-over",
            "\(unknown.json)")
        let unauthorized = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: serve.baseURL + "/v1/subs/001999.b.0003"), timeout: .seconds(30))
        #expect(unauthorized.status == .unauthorized)
        #expect(serve.stop() == 0)
        let cli = try Self.lookup(teams, signer.transferSub)
        #expect(cli.status == 0 && NSDictionary(dictionary: cli.json) == Self.userMembers(signedIn.json), "\(cli.json)")
        let cliUnknown = try Self.lookup(teams, "000000.never.0000")
        #expect(cliUnknown.status == 1 && cliUnknown.json["reason"] as? String == "not-handed-over")

        // The exchange of the same package calls Apple for the other 11 users only.
        let exchanged = try f.exchange(f.package, key: f.senderKey)
        #expect(exchanged.status == 0, "\(exchanged.err)")
        let calls = try await teams.standInAnswers()
        #expect((calls["usermigrationinfo.200"] ?? 0) - generatedCalls == 11, "\(calls)")
        let output = try String(contentsOfFile: teams.output, encoding: .utf8)
        let line = try #require(output.split(whereSeparator: \.isNewline).first { $0.contains(signer.transferSub) })
        #expect(line.contains(signer.accountID), "\(line)")
        // B's ledger alone names the account: query user, the state answer and reconcile.
        let user = try handover("query", "user", signer.accountID, "--ledger", teams.recipient, "--format", "json")
        #expect(user.status == 0 && user.out.contains(signer.transferSub) && user.out.contains("\"sign-in\""), "\(user.out)\(user.err)")
        let state = try handover("query", "state", "--ledger", teams.recipient, "--format", "csv")
        let stateLine = try #require(state.out.split(whereSeparator: \.isNewline).first { $0.contains(signer.transferSub) })
        #expect(stateLine.contains(signer.accountID))
        let reconciled = try handover(
            "reconcile", "--packages", f.package, "--sender-key", f.senderKey, "--recipient", teams.recipient, "--rows", "--format", "csv")
        let reconciledLine = try #require(reconciled.out.split(whereSeparator: \.isNewline).first { $0.contains(signer.transferSub) })
        #expect(reconciledLine.contains(signer.accountID) && reconciledLine.contains("signed-in"), "\(reconciledLine)")

        // The projections rebuilt from the log alone, and the deep check, agree; verify checks the rows against the manifest.
        let verified = try handover("verify", "--deep", "--ledger", teams.recipient)
        #expect(verified.status == 0 && verified.out.contains("OK: 1 handoff of 12 rows"), "\(verified.out)\(verified.err)")
        let stateBefore = state.out
        let rebuilt = try handover("projections", "rebuild", "--ledger", teams.recipient)
        #expect(rebuilt.status == 0, "\(rebuilt.err)")
        #expect(try handover("query", "state", "--ledger", teams.recipient, "--format", "csv").out == stateBefore)
    }

    @Test("reconcile, report and evidence refuse ledgers given in the wrong roles")
    func wrongRoles() throws {
        let f = try SignedHandoffTests.Fixture(users: 3)
        let teams = f.teams
        let swapped = try handover("reconcile", "--sender", teams.recipient, "--recipient", teams.sender)
        #expect(swapped.status == 2 && swapped.err.contains("recipient's ledger") && swapped.err.contains("the other way round"), "\(swapped.err)")
        let packages = try handover("reconcile", "--packages", f.package, "--sender-key", f.senderKey, "--recipient", teams.sender)
        #expect(packages.status == 2 && packages.err.contains("sender's ledger"), "\(packages.err)")
        let report = try handover("report", "--ledger", teams.sender, "--sender", teams.recipient)
        #expect(report.status == 2, "\(report.err)")
        let evidence = try handover("evidence", "write", "x", "--ledger", teams.sender, "--sender", teams.recipient, "--out", teams.dir.sub("bundle"))
        #expect(evidence.status == 2, "\(evidence.err)")
    }
}
