import AppleID
import AsyncHTTPClient
import Basics
import Foundation
import Ledger
import TestSupport
import Testing

/// The identifiers the ledger holds (1 to 400 bytes of UTF-8, no NUL), at the edges, in
/// tokens sent to `handover serve` and `handover ingest` as users run them.
@Suite("Identifier limits in tokens, through serve and ingest")
struct IdentifierLimitTests {
    /// A `sub` and the reason it is refused with, or nil when it is recorded.
    static func cases(_ f: IntakeFixture, tag: String) throws -> [(name: String, body: Data, reason: String?)] {
        func notification(sub: String) throws -> Data {
            IntakeFixture.body(
                try IntakeFixture.signed(try f.notificationClaims(type: "email-disabled", sub: sub, jti: "\(tag)-\(sub.utf8.count)-\(sub.hashValue)"))
            )
        }
        let notUTF8 =
            Base64URL.encode(Data(#"{"alg":"RS256","kid":"\#(TestKeys.minter.keyID)"}"#.utf8)) + "."
            + Base64URL.encode(Data(#"{"sub":"\#(tag)"#.utf8) + Data([0xC3, 0x28]) + Data(#""}"#.utf8)) + ".c2ln"
        return [
            ("400 bytes", try notification(sub: String(repeating: "4", count: 399) + tag), nil),
            ("401 bytes", try notification(sub: String(repeating: "4", count: 400) + tag), "invalid-claim"),
            ("NUL", try notification(sub: "001.\(tag)\u{0}.1"), "invalid-claim"),
            ("invalid UTF-8", IntakeFixture.body(notUTF8), "malformed-json"),
        ]
    }

    @Test("a 400-byte sub is recorded; one of 401 bytes, one with NUL and one that is not UTF-8 are recorded as refusals, by serve and by ingest")
    func tokens() async throws {
        let f = try await IntakeFixture()
        let (ledger, jwks) = try IntakeFixture.commandLineLedger(in: f.dir)
        let serve = try ServerProcess(["serve", "--ledger", ledger, "--port", "0", "--jwks-file", jwks])
        for (name, body, reason) in try IdentifierLimitTests.cases(f, tag: "s") {
            let answer = try await HTTPClient.shared.send(serve.baseURL + "/apple/notifications", body: body)
            #expect(answer.status == (reason == nil ? 200 : 400) && answer.json["reason"] as? String == reason, "serve, \(name): \(answer.body)")
        }
        let stopped = serve.finish()
        #expect(stopped.status == 0, "\(stopped.err)")
        for (name, body, reason) in try IdentifierLimitTests.cases(f, tag: "i") {
            let file = f.dir.sub("n.json")
            try body.write(to: URL(fileURLWithPath: file))
            let r = try runProduct("handover", ["ingest", "notification", "--ledger", ledger, "--jwks-file", jwks, file])
            #expect(
                r.status == (reason == nil ? 0 : 1) && (reason.map { r.err.contains("rejected (\($0))") } ?? r.out.contains("1 recorded")),
                "ingest, \(name): \(r.out) \(r.err)")
        }
        let events = try runProduct("handover", ["query", "events", "--ledger", ledger, "--format", "json"])
        let bodies = try #require(JSONValue.parse(Array(events.out.utf8)).arrayValue)
        #expect(bodies.filter { $0.objectValue?["type"]?.stringValue == "notification-received" }.count == 2)
        #expect(bodies.filter { $0.objectValue?["type"]?.stringValue == "notification-rejected" }.count == 6)
        let verified = try runProduct("handover", ["verify", "--ledger", ledger])
        #expect(verified.status == 0, "\(verified.err)")
    }
}
