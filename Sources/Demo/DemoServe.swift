import AppleID
import AppleSimulator
import AsyncHTTPClient
import CryptoExtras
import Foundation
import Intake
import Ledger
import Logging
import NIOCore
import NotificationServer
import Projections

/// The part of the rehearsal after the exchange: `handover serve` on loopback hears the
/// app backend's sign-in reports and Apple's notifications, signed by the stand-in's key,
/// including a redelivery, a forgery and a user no migration step named.
struct DemoServe {
    let ledger: Ledger
    let projection: UserProjection
    let simulator: RunningSimulator
    let recipientTeam: String
    let clientID: String
    let logger: Logger

    /// What was sent, to say so.
    struct Summary {
        var signIns = 0
        var notifications: [String: Int] = [:]
        var answers: [String: Int] = [:]
        var erased = 0
        var url = ""
    }

    /// Signs in `heldBack` users (never exchanged) and `exchanged` ones with their
    /// `transfer_sub`, then sends notifications about exchanged users.
    func run(heldBack: [String], exchanged: [String]) async throws -> Summary {
        let secret = UUID().uuidString + UUID().uuidString
        let keys = AppleKeySet(.url(simulator.baseURL + "/auth/keys"))
        let intake = try AppleIntake(ledger: ledger, projection: projection, keys: keys, logger: logger)
        let running = try await RunningHandoverServer(
            HandoverServer(
                intake: intake, configuration: ServeConfiguration(port: 0, signInSecret: try BearerSecret(secret: secret, for: .signIn)),
                logger: logger))
        defer { Task { await running.stop() } }
        let base = running.baseURL
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { _ = http.shutdown() }
        var summary = Summary(url: base)
        let minter = simulator.server.minter
        let now = Int64(Date().timeIntervalSince1970)

        func post(_ path: String, _ body: String, bearer: String? = nil) async throws {
            var request = HTTPClientRequest(url: base + path)
            request.method = .POST
            if let bearer { request.headers.add(name: "Authorization", value: "Bearer " + bearer) }
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await http.execute(request, timeout: .seconds(30))
            let answer = try await response.body.collect(upTo: 1 << 16)
            // A refusal's body may be no JSON reply at all: it is counted as rejected.
            let status = (try? JSONDecoder().decode(ServeAnswer.self, from: Data(answer.readableBytesView)))?.status
            summary.answers["\(response.status.code) \(status ?? "rejected")", default: 0] += 1
        }

        // The app backend reports sign-ins: held-back users migrate through them.
        // (A user who revoked consent cannot sign in: the stand-in refuses their transfer_sub.)
        for transferSub in heldBack + exchanged.prefix(5) {
            // A user who revoked consent is refused by the stand-in, as expected: no sign-in.
            guard let user = try? simulator.server.apple.exchange(teamID: recipientTeam, transferSub: transferSub) else { continue }
            // The token carries the email the exchange would have given: a relay address of team B's for most users.
            let token = try await minter.identityToken(
                audience: clientID, sub: user.sub, transferSub: transferSub, email: user.email, isPrivateEmail: user.isPrivateEmail, issuedAt: now)
            let body = String(decoding: try JSONEncoder().encode(["identity_token": token]), as: UTF8.self)
            try await post("/apple/sign-ins", body, bearer: secret)
            summary.signIns += 1
        }

        // Apple notifies: forwarding changes, revocations, deletions, one redelivery.
        // Users who revoked consent are refused by the stand-in, as expected: they get no notification.
        let subs = exchanged.dropFirst(5).prefix(13).compactMap { try? simulator.server.apple.exchange(teamID: recipientTeam, transferSub: $0).sub }
        let plan =
            Array(repeating: "email-disabled", count: 5) + Array(repeating: "email-enabled", count: 3)
            + Array(repeating: "consent-revoked", count: 3) + Array(repeating: "account-deleted", count: 2)
        var first = ""
        for (sub, type) in zip(subs, plan) {
            let body = try await minter.notification(
                audience: clientID, type: type, sub: sub, email: type.hasPrefix("email") ? "relay-\(sub.prefix(12))@privaterelay.appleid.com" : nil,
                isPrivateEmail: true, eventTime: now)
            if first.isEmpty { first = body }
            try await post("/apple/notifications", body)
            summary.notifications[type, default: 0] += 1
        }
        try await post("/apple/notifications", first)
        summary.notifications["redelivered", default: 0] += 1
        // A user no migration step named, and a forgery signed with someone else's key.
        try await post(
            "/apple/notifications", try minter.notification(audience: clientID, type: "consent-revoked", sub: "001.never-seen.0001", eventTime: now))
        summary.notifications["about an unknown sub", default: 0] += 1
        let forger = TokenMinter(key: try _RSA.Signing.PrivateKey(keySize: .bits2048), claimingKeyID: minter.keyID)
        try await post("/apple/notifications", try forger.notification(audience: clientID, type: "account-deleted", sub: subs[0], eventTime: now))
        summary.notifications["forged", default: 0] += 1
        summary.erased = running.server.metrics.usersErased
        return summary
    }
}

/// The part of `serve`'s answer the rehearsal counts.
private struct ServeAnswer: Decodable {
    var status: String?
}
