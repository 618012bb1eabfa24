import AppleID
import Foundation
import HTTPTypes
import Intake
import Ledger

extension Harness {
    /// Any request to `serve`: the first line is `METHOD PATH`, the second part the headers one a
    /// line (`Authorization: Bearer fuzz-sign-in-secret` opens the sign-in route), the third the
    /// body. Every answer must be one `serve` gives on purpose: never a 500.
    static let serveRequest = Harness("serve-request", "any request to serve's routes (method, path, headers, body), answered in-process") { input in
        let parts = FuzzInput(input, parts: 3)
        let line = parts.text(0).split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        let method = line.first.flatMap { HTTPRequest.Method(String($0)) } ?? .post
        let path = line.count > 1 ? String(line[1]) : "/apple/sign-ins"
        var headers = HTTPFields()
        for field in parts.text(1).split(separator: "\n") {
            guard let colon = field.firstIndex(of: ":"), let name = HTTPField.Name(String(field[..<colon])) else { continue }
            headers.append(HTTPField(name: name, value: String(field[field.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
        }
        let status = try ServeFixture.next().respond(method: method, path: path, headers: headers, body: parts[2])
        HarnessCheck.expect(ServeFixture.expectedStatuses.contains(status.code), "serve answered \(status.code) to \(method) \(path)")
    }

    /// Claims behind Apple's signature: the first part is the claims as they are signed (any
    /// bytes), the second the JWS header (the stand-in's `{"alg":"RS256","kid":…}` when empty),
    /// the third the time to verify at, in seconds. The harness signs them with the stand-in's
    /// key, then reports them as a sign-in and delivers them as a notification.
    static let signedClaims = Harness("signed-claims", "claims signed with Apple's (the stand-in's) key, recorded as a sign-in and as a notification")
    { input in
        let parts = FuzzInput(input, parts: 3)
        let header = parts[1].isEmpty ? Array("{\"alg\":\"RS256\",\"kid\":\"\(ServeFixture.minter.keyID)\"}".utf8) : parts[1]
        let token = try ServeFixture.minter.sign(rawHeader: header, rawClaims: parts[0])
        let at = Date(
            timeIntervalSince1970: Double(
                Int64(parts.text(2).trimmingCharacters(in: .whitespacesAndNewlines)).map { min(max($0, 0), 253_402_300_799) } ?? 1_790_000_000))
        let fixture = ServeFixture.next()
        let signIn = try blocking { try await fixture.intake.receiveSignIn(token, verifyAt: at) }
        let notification = try blocking {
            try await fixture.intake.receiveNotification(Data("{\"payload\":\"\(token)\"}".utf8), now: at)
        }
        for receipt in [signIn, notification] {
            HarnessCheck.expect(receipt.sequence > 0, "a delivery was neither recorded nor refused on record")
            let event = try fixture.ledger.read { try $0.event(receipt.sequence) }
            HarnessCheck.expect(event?.type == receipt.eventType, "the event recorded for a delivery is not the one its receipt names")
        }
    }

    /// A file of `handover ingest sign-in` or `ingest notification`: a report body (the bare
    /// token or `{"identity_token", "nonce"}`) or Apple's notification body, as a stranger sent it.
    static let ingestToken = Harness(
        "ingest-token", "a token file as ingest reads it: a sign-in report and a notification body, verified and recorded"
    ) { input in
        let fixture = ServeFixture.next()
        let report = SignInReport(Data(input))
        let at = Date(timeIntervalSince1970: 1_790_000_000)
        let signIn = try blocking {
            try await fixture.intake.receiveSignIn(report.token, nonce: report.nonce, verifyAt: at, received: report.received)
        }
        let notification = try blocking { try await fixture.intake.receiveNotification(Data(input), now: at) }
        HarnessCheck.expect(signIn.sequence > 0 && notification.sequence > 0, "a delivery was neither recorded nor refused on record")
    }
}
