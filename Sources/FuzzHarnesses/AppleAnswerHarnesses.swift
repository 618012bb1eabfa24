import AppleID
import Basics
import Foundation
import Ledger
import NIOHTTP1

extension Harness {
    /// Apple's answer to the client (or a proxy's in its place): the first line is the status
    /// and the endpoint (`200 token`, `400 migration`), the second part the headers one a line,
    /// the third the body. Read as the client reads it, then as a run records it: a token's
    /// expiry, a `Retry-After` wait.
    static let appleAnswer = Harness(
        "apple-answer", "an answer of Apple's token or migration endpoint (status, headers, body), read as the client and the run read it"
    ) { input in
        let parts = FuzzInput(input, parts: 3)
        let head = parts.text(0).split(separator: " ", omittingEmptySubsequences: true)
        let status = head.first.flatMap { Int($0) } ?? 200
        let isToken = head.dropFirst().first != "migration"
        var headers = HTTPHeaders()
        for line in parts.text(1).split(separator: "\n") {
            // Only what an HTTP parser hands on: a name of ASCII token characters.
            guard let colon = line.firstIndex(of: ":"), !line[..<colon].isEmpty,
                line[..<colon].unicodeScalars.allSatisfy({
                    $0.isASCII && $0.value > 0x20 && $0.value < 0x7F && !"()<>@,;:\\\"/[]?={}".unicodeScalars.contains($0)
                })
            else { continue }
            headers.add(name: String(line[..<colon]), value: String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        let body = Data(parts[2])
        do {
            if isToken {
                let answer = try AppleIDClient.answer(AppleAnswers.Token.self, status: status, headers: headers, body: body, isTokenEndpoint: true)
                let sentAt = Date(timeIntervalSince1970: 1_790_000_000)
                let token = try AppleIDClient.accessToken(from: answer, sentAt: sentAt)
                // What the run records of it.
                let expires = Timestamp(token.expiresAt)
                HarnessCheck.expect(
                    expires.isRepresentable && expires >= Timestamp(sentAt), "an access token expires at no time the ledger can record")
                _ = token.needsRefresh(at: sentAt)
            } else {
                let answer = try AppleIDClient.answer(
                    AppleAnswers.MigrationInfo.self, status: status, headers: headers, body: body, isTokenEndpoint: false)
                _ = try? AppleIDClient.transferSub(from: answer)
                _ = try AppleIDClient.migratedUser(from: answer)
            }
        } catch let error as AppleIDError {
            // A refusal's wait, as the run's retries compute it.
            if let wait = error.retryAfter { HarnessCheck.expect(wait.isFinite && wait >= 0, "a Retry-After that is no wait: \(wait)") }
            let delay = RetryPolicy().delay(after: 3)
            HarnessCheck.expect(delay.isFinite && delay >= 0, "a retry delay that is no wait: \(delay)")
            throw error
        }
    }

    /// Apple's key set, as `--jwks-file` and the answer of `/auth/keys` are read.
    static let keySet = Harness("key-set", "a JWKS document (Apple's /auth/keys answer, --jwks-file), read into keys") { input in
        let set = try blocking { try await JSONWebKeySet(json: Data(input)) }
        HarnessCheck.expect(!set.keyIDs.isEmpty, "a key set with no key was accepted")
    }
}
