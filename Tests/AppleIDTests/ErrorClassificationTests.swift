import AsyncHTTPClient
import Basics
import Foundation
import Ledger
import NIOHTTP1
import Testing

@testable import AppleID

/// How Apple's error answers and transport failures are classified (``AppleIDError``, the
/// TN3107 model): the class, and from it whether the call is retried, the user's failure
/// recorded, or the whole run stopped. Pure: answers made up, nothing sent.
@Suite("classification of Apple's errors")
struct ErrorClassificationTests {
    /// One error answer and the class it must get.
    struct Answer: Sendable, CustomStringConvertible {
        let status: Int
        let body: String?
        let tokenEndpoint: Bool
        let code: FailureClass
        /// The `error` Apple sent, as the classified error keeps it.
        let appleError: String?

        init(_ status: Int, _ body: String?, tokenEndpoint: Bool = false, _ code: FailureClass, appleError: String? = nil) {
            self.status = status
            self.body = body
            self.tokenEndpoint = tokenEndpoint
            self.code = code
            self.appleError = appleError
        }

        var description: String { "HTTP \(status) \(body ?? "(no body)")\(tokenEndpoint ? " from the token endpoint" : "")" }
    }

    /// `status` and `body` classified as the client classifies a non-200 answer: the body read
    /// as an error answer when it is one.
    static func classify(_ status: Int, _ body: String?, tokenEndpoint: Bool = false, headers: [(String, String)] = []) -> AppleIDError {
        let failure = body.flatMap { AppleAnswers.decode(AppleAnswers.Failure.self, from: Data($0.utf8)) }
        return AppleIDClient.classify(status: status, headers: HTTPHeaders(headers), failure: failure, isTokenEndpoint: tokenEndpoint)
    }

    static let answers: [Answer] = [
        // Throttling and server errors, whatever the body says.
        Answer(429, nil, .rateLimited),
        Answer(429, #"{"error":"invalid_client"}"#, .rateLimited, appleError: "invalid_client"),
        Answer(500, nil, .serverError),
        Answer(502, "<html>Bad Gateway</html>", .serverError),
        Answer(503, #"{"error":"invalid_request"}"#, .serverError, appleError: "invalid_request"),
        Answer(599, nil, tokenEndpoint: true, .serverError),
        // Credentials refused: from either endpoint, with any status.
        Answer(400, #"{"error":"invalid_client"}"#, .invalidClient, appleError: "invalid_client"),
        Answer(401, #"{"error":"invalid_client","error_description":"bad kid"}"#, tokenEndpoint: true, .invalidClient, appleError: "invalid_client"),
        // invalid_grant stops the run from the token endpoint only.
        Answer(400, #"{"error":"invalid_grant"}"#, tokenEndpoint: true, .invalidGrant, appleError: "invalid_grant"),
        Answer(400, #"{"error":"invalid_grant"}"#, .other, appleError: "invalid_grant"),
        // 401: the access token refused, unless the body names the client.
        Answer(401, nil, .invalidToken),
        Answer(401, #"{"error":"invalid_token"}"#, .invalidToken, appleError: "invalid_token"),
        Answer(401, #"{"error":"invalid_request"}"#, .invalidToken, appleError: "invalid_request"),
        // invalid_request: this user's failure.
        Answer(400, #"{"error":"invalid_request"}"#, .invalidRequest, appleError: "invalid_request"),
        Answer(400, #"{"error":"invalid_request","error_description":"sub is not valid"}"#, .invalidRequest, appleError: "invalid_request"),
        // Codes Apple does not document: a refusal of the token endpoint means no token (the run
        // stops as for invalid_grant); elsewhere, some other failure of this user's.
        Answer(400, #"{"error":"unsupported_grant_type"}"#, tokenEndpoint: true, .invalidGrant, appleError: "unsupported_grant_type"),
        Answer(400, #"{"error":"something_new","error_description":"?"}"#, .other, appleError: "something_new"),
        // No error code: no body, not JSON, not an object, `error` not a string, no `error`.
        Answer(400, nil, .other),
        Answer(400, "", .other),
        Answer(400, "Bad Request", .other),
        Answer(400, "[]", .other),
        Answer(400, #"{"error":42}"#, .other),
        Answer(400, #"{"message":"invalid_client"}"#, .other),
        Answer(404, nil, tokenEndpoint: true, .other),
    ]

    @Test("each HTTP status and Apple error body gets its documented class", arguments: answers)
    func classified(answer: Answer) {
        let error = Self.classify(answer.status, answer.body, tokenEndpoint: answer.tokenEndpoint)
        #expect(error.code == answer.code, "\(answer): \(error)")
        #expect(error.httpStatus == answer.status && error.appleError == answer.appleError && error.attempts == 1, "\(answer): \(error)")
        #expect(error.retryAfter == nil, "\(answer): no Retry-After header")
    }

    @Test("retried: 429, 5xx, timeouts, dropped connections; stopping the run: refused credentials or token; the rest is the user's failure")
    func whatEachClassMeans() {
        let transient: Set<String> = ["rate_limited", "server_error", "timeout", "connection"]
        let stopping: Set<String> = ["invalid_client", "invalid_grant", "invalid_token", "invalid_configuration"]
        let codes: [FailureClass] = [
            .invalidRequest, .invalidClient, .invalidGrant, .invalidToken, .rateLimited, .serverError, .timeout,
            .connection, .invalidResponse, .invalidConfiguration, .other,
        ]
        for code in codes {
            let error = AppleIDError(code, "x")
            #expect(error.isTransient == transient.contains(code.rawValue), "\(code.rawValue)")
            #expect(error.stopsRun == stopping.contains(code.rawValue), "\(code.rawValue)")
        }
        #expect(Self.classify(401, nil).stopsRun && !Self.classify(400, #"{"error":"invalid_request"}"#).stopsRun)
        #expect(Self.classify(503, nil).isTransient && !Self.classify(400, nil).isTransient)
    }

    @Test("messages: credentials refused name what to check; Apple's error_description is kept; invalid_request without one says what it may mean")
    func messages() {
        let refused = Self.classify(400, #"{"error":"invalid_client","error_description":"bad kid"}"#)
        #expect(refused.message.contains("(invalid_client: bad kid)") && refused.message.hasSuffix(AppleIDError.credentialHint), "\(refused.message)")
        #expect(Self.classify(400, #"{"error":"invalid_grant"}"#, tokenEndpoint: true).message.hasSuffix(AppleIDError.credentialHint))
        #expect(
            Self.classify(400, #"{"error":"invalid_request","error_description":"sub is not valid"}"#).message
                == "Apple answered invalid_request: sub is not valid")
        #expect(Self.classify(400, #"{"error":"invalid_request"}"#).message.contains("the user revoked authorization"))
        #expect(Self.classify(418, "teapot").message == "Apple answered HTTP 418 without an error code")
        let error = AppleIDError(.serverError, "Apple answered HTTP 503", httpStatus: 503, attempts: 3)
        #expect(error.description == "server_error: Apple answered HTTP 503 (3 tries)")
        #expect(Self.classify(429, "").description == "rate_limited: Apple is throttling (HTTP 429)")
        #expect(
            AppleIDError(.invalidResponse, "Apple answered 200 with a body that is not a JSON object", httpStatus: 200).description
                == "invalid_response: Apple answered 200 with a body that is not a JSON object (HTTP 200)")
        #expect(AppleIDError(.timeout, "no answer").description == "timeout: no answer")
    }

    @Test("Retry-After, in seconds or as an HTTP date, is kept for 429 and 5xx; negative or past is 0; unreadable is absent")
    func retryAfter() throws {
        #expect(Self.classify(429, nil, headers: [("Retry-After", "7")]).retryAfter == 7)
        #expect(Self.classify(503, nil, headers: [("Retry-After", " 2.5 ")]).retryAfter == 2.5)
        #expect(Self.classify(429, nil, headers: [("Retry-After", "-3")]).retryAfter == 0)
        #expect(Self.classify(429, nil, headers: [("Retry-After", "soon")]).retryAfter == nil)
        // A wait no clock gives is no wait: a day at most, and no infinity or NaN.
        #expect(Self.classify(429, nil, headers: [("Retry-After", "99999999999999999999999")]).retryAfter == 86_400)
        #expect(Self.classify(429, nil, headers: [("Retry-After", "1e400")]).retryAfter == nil)
        #expect(Self.classify(429, nil, headers: [("Retry-After", "nan")]).retryAfter == nil)
        #expect(Self.classify(400, #"{"error":"invalid_request"}"#, headers: [("Retry-After", "7")]).retryAfter == nil)

        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        let later = formatter.string(from: Date().addingTimeInterval(90))
        let wait = try #require(Self.classify(503, nil, headers: [("Retry-After", later)]).retryAfter, "\(later)")
        #expect((85...91).contains(wait), "\(later): \(wait)")
        #expect(Self.classify(429, nil, headers: [("Retry-After", formatter.string(from: Date().addingTimeInterval(-600)))]).retryAfter == 0)
    }

    @Test("transport failures: timeouts are timeouts, anything else a failed connection, both retried, without an HTTP status, naming the URL called")
    func transport() {
        let url = "http://127.0.0.1:9/auth/token"
        for timeout in [HTTPClientError.deadlineExceeded, .readTimeout, .connectTimeout] {
            let error = AppleIDClient.classifyTransport(timeout, url: url)
            #expect(error.code == .timeout && error.isTransient && error.httpStatus == nil && error.message.contains(url), "\(timeout): \(error)")
        }
        struct Reset: Error {}
        for failure in [HTTPClientError.remoteConnectionClosed, HTTPClientError.cancelled, Reset()] as [any Error] {
            let error = AppleIDClient.classifyTransport(failure, url: url)
            #expect(error.code == .connection && error.isTransient && error.httpStatus == nil && error.message.contains(url), "\(failure): \(error)")
        }
    }

    @Test("a token answer is refused without an expires_in of 1 s to a year: 1e308 would be an expiry no ledger can record")
    func tokenLifetime() throws {
        func token(_ body: String) throws -> AccessToken {
            let answer = try AppleIDClient.answer(
                AppleAnswers.Token.self, status: 200, headers: HTTPHeaders(), body: Data(body.utf8), isTokenEndpoint: true)
            return try AppleIDClient.accessToken(from: answer, sentAt: Date(timeIntervalSince1970: 1_790_000_000))
        }
        #expect(try token(#"{"access_token":"a","token_type":"Bearer","expires_in":3600}"#).lifetime == 3600)
        for lifetime in ["1e308", "0", "-5", "31622401"] {
            #expect(throws: AppleIDError.self, "\(lifetime)") { try token(#"{"access_token":"a","token_type":"Bearer","expires_in":\#(lifetime)}"#) }
        }
    }
}
