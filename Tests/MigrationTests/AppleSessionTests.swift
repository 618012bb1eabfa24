import AppleID
import Foundation
import Synchronization
import TestSupport
import Testing

/// A run's workers share one session: however many ask at once, Apple is asked for one
/// client secret and one access token.
@Suite("one session's credentials")
struct AppleSessionTests {
    let dir = TemporaryDirectory()

    @Test("64 callers asking at once for the client secret and the access token: one of each is made, one token obtained and recorded")
    func oneTokenForConcurrentCallers() async throws {
        let fixture = try await AppleFixture.start(in: dir)
        let client = AppleIDClient(endpoints: fixture.endpoints)
        let recorded = Mutex<[String]>([])
        let session = AppleSession(
            client: client, credentials: fixture.sender,
            onToken: { outcome in
                if case .issued(let token) = outcome { recorded.withLock { $0.append(token.value) } }
            })
        // Signing a client secret suspends the session; a caller arriving meanwhile must
        // wait for what the first caller started rather than start its own.
        let answers = try await withThrowingTaskGroup(of: (secret: String, token: String).self) { group in
            for _ in 0..<64 {
                group.addTask {
                    let secret = try await session.clientSecret()
                    let token = try await session.accessToken()
                    return (secret.token, token.value)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        try await client.shutdown()
        #expect(Set(answers.map(\.secret)).count == 1, "one client secret for every caller")
        #expect(Set(answers.map(\.token)).count == 1, "one access token for every caller")
        #expect(fixture.simulator.server.stats.snapshot["token.200", default: 0] == 1, "Apple was asked for one token")
        #expect(recorded.withLock { $0 } == [answers[0].token], "the token was recorded once")
    }
}
