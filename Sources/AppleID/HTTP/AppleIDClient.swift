import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Single calls to Apple's Sign in with Apple endpoints over one pooled HTTP client. Each
/// call makes one attempt and classifies what went wrong (``AppleIDError``); retrying is
/// ``RetryPolicy``'s job and choosing tokens ``AppleSession``'s.
public final class AppleIDClient: Sendable {
    public let endpoints: AppleEndpoints
    /// The pooled HTTP client all calls share.
    public let http: HTTPClient
    /// How long one attempt may take, connection included.
    public let requestTimeout: TimeAmount
    private let ownsHTTPClient: Bool

    /// A client over its own HTTP connection pool of `maximumConnections` per host.
    public convenience init(endpoints: AppleEndpoints, maximumConnections: Int = 16, requestTimeout: TimeAmount = .seconds(30)) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, maximumConnections))
        // A connection refused fails its call at once, naming the cause: the run's pace does the
        // waiting (the pool's own retries would hold each call until its timeout, saying nothing).
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout = .init(connect: .seconds(10), read: requestTimeout)
        configuration.decompression = .disabled
        self.init(
            endpoints: endpoints, http: HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration), ownsHTTPClient: true,
            requestTimeout: requestTimeout)
    }

    /// A client over an HTTP client the caller owns and shuts down.
    public convenience init(endpoints: AppleEndpoints, http: HTTPClient, requestTimeout: TimeAmount = .seconds(30)) {
        self.init(endpoints: endpoints, http: http, ownsHTTPClient: false, requestTimeout: requestTimeout)
    }

    private init(endpoints: AppleEndpoints, http: HTTPClient, ownsHTTPClient: Bool, requestTimeout: TimeAmount) {
        self.endpoints = endpoints
        self.http = http
        self.ownsHTTPClient = ownsHTTPClient
        self.requestTimeout = requestTimeout
    }

    /// Shuts the HTTP client down if this client created it.
    public func shutdown() async throws {
        if ownsHTTPClient { try await http.shutdown() }
    }

    /// `POST /auth/token` with `grant_type=client_credentials` and `scope=user.migration`.
    public func requestAccessToken(clientID: String, clientSecret: ClientSecret, now: @Sendable () -> Date = Date.init) async throws -> AccessToken {
        let fields = [
            ("grant_type", "client_credentials"), ("scope", "user.migration"), ("client_id", clientID), ("client_secret", clientSecret.token),
        ]
        // The lifetime counts from when the request left, so latency never stretches it.
        let sentAt = now()
        let answer = try await post(endpoints.token, fields: fields, bearer: nil, isTokenEndpoint: true, as: AppleAnswers.Token.self)
        return try AppleIDClient.accessToken(from: answer, sentAt: sentAt)
    }

    /// The longest access-token lifetime accepted, seconds (Apple's is 3600): a longer one is no
    /// lifetime a run can plan renewals by, and its expiry would be no time the ledger can record.
    static let maximumTokenLifetime: Double = 366 * 86_400

    /// The token in a 200 answer of the token endpoint, checked.
    package static func accessToken(from answer: AppleAnswers.Token, sentAt: Date) throws -> AccessToken {
        guard let token = answer.accessToken, !token.isEmpty else {
            throw AppleIDError(.invalidResponse, "the token endpoint answered 200 without an access_token", httpStatus: 200)
        }
        if let type = answer.tokenType, type.lowercased() != "bearer" {
            throw AppleIDError(.invalidResponse, "the token endpoint answered token_type \(type), expected Bearer", httpStatus: 200)
        }
        guard let expiresIn = answer.expiresIn, expiresIn > 0, expiresIn <= maximumTokenLifetime else {
            throw AppleIDError(
                .invalidResponse, "the token endpoint answered without an expires_in of 1 s to \(Int(maximumTokenLifetime)) s", httpStatus: 200)
        }
        return AccessToken(value: token, issuedAt: sentAt, lifetime: expiresIn)
    }

    /// Team A: `POST /auth/usermigrationinfo` with `sub` and `target`; returns the `transfer_sub`.
    public func generateTransferID(
        sub: String, target: String, clientID: String, clientSecret: ClientSecret, accessToken: AccessToken
    ) async throws -> String {
        let fields = [("sub", sub), ("target", target), ("client_id", clientID), ("client_secret", clientSecret.token)]
        return try AppleIDClient.transferSub(from: try await migrationInfo(fields, accessToken))
    }

    /// Team A's `transfer_sub` in a 200 answer of `usermigrationinfo`, checked.
    package static func transferSub(from answer: AppleAnswers.MigrationInfo) throws -> String {
        guard let transferSub = answer.transferSub, !transferSub.isEmpty else {
            throw AppleIDError(.invalidResponse, "usermigrationinfo answered 200 without a transfer_sub", httpStatus: 200)
        }
        return transferSub
    }

    /// Team B: `POST /auth/usermigrationinfo` with `transfer_sub`; returns the new `sub` and email.
    public func exchangeTransferID(
        transferSub: String, clientID: String, clientSecret: ClientSecret, accessToken: AccessToken
    ) async throws -> MigratedUser {
        let fields = [("transfer_sub", transferSub), ("client_id", clientID), ("client_secret", clientSecret.token)]
        return try AppleIDClient.migratedUser(from: try await migrationInfo(fields, accessToken))
    }

    /// `POST /auth/usermigrationinfo` with `fields` and the bearer token.
    private func migrationInfo(_ fields: [(String, String)], _ accessToken: AccessToken) async throws -> AppleAnswers.MigrationInfo {
        try await post(endpoints.userMigrationInfo, fields: fields, bearer: accessToken, isTokenEndpoint: false, as: AppleAnswers.MigrationInfo.self)
    }

    /// Team B's new `sub` and email in a 200 answer of `usermigrationinfo`, checked.
    package static func migratedUser(from answer: AppleAnswers.MigrationInfo) throws -> MigratedUser {
        guard let sub = answer.sub, !sub.isEmpty else {
            throw AppleIDError(.invalidResponse, "usermigrationinfo answered 200 without a sub", httpStatus: 200)
        }
        let email = answer.email.flatMap { $0.isEmpty ? nil : $0 }
        return MigratedUser(sub: sub, email: email, isPrivateEmail: answer.isPrivateEmail)
    }

    /// One POST; a 200 answer decoded as `T`, any other classified (``classify(status:headers:failure:isTokenEndpoint:)``).
    private func post<T: Decodable>(
        _ url: String, fields: [(String, String)], bearer: AccessToken?, isTokenEndpoint: Bool, as type: T.Type
    ) async throws -> T {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "handover")
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer " + bearer.value) }
        request.body = .bytes(ByteBuffer(string: FormEncoding.encode(fields)))
        let status: Int
        let headers: HTTPHeaders
        let body: ByteBuffer
        do {
            let response = try await http.execute(request, timeout: requestTimeout)
            status = Int(response.status.code)
            headers = response.headers
            body = try await response.body.collect(upTo: 1 << 20)
        } catch let error as AppleIDError {
            throw error
        } catch {
            throw AppleIDClient.classifyTransport(error, url: url)
        }
        return try AppleIDClient.answer(
            T.self, status: status, headers: headers, body: Data(body.readableBytesView), isTokenEndpoint: isTokenEndpoint)
    }

    /// What an answer of status `status` means: a 200's body decoded as `T`, any other status
    /// the ``AppleIDError`` it comes to (``classify(status:headers:failure:isTokenEndpoint:)``).
    package static func answer<T: Decodable>(_ type: T.Type, status: Int, headers: HTTPHeaders, body: Data, isTokenEndpoint: Bool) throws -> T {
        if status == 200 {
            guard let answer = AppleAnswers.decode(T.self, from: body) else {
                throw AppleIDError(.invalidResponse, "Apple answered 200 with a body that is not a JSON object", httpStatus: 200)
            }
            return answer
        }
        let failure = AppleAnswers.decode(AppleAnswers.Failure.self, from: body)
        var error = AppleIDClient.classify(status: status, headers: headers, failure: failure, isTokenEndpoint: isTokenEndpoint)
        error.appleDescription = failure?.errorDescription
        throw error
    }

    /// The TN3107 model: what an HTTP error answer means for the run.
    static func classify(status: Int, headers: HTTPHeaders, failure: AppleAnswers.Failure?, isTokenEndpoint: Bool) -> AppleIDError {
        let appleError = failure?.error
        let detail = failure?.errorDescription.map { ": \($0)" } ?? ""
        switch (status, appleError) {
        case (429, _):
            return AppleIDError(
                .rateLimited, "Apple is throttling (HTTP 429)", httpStatus: status, appleError: appleError, retryAfter: retryAfter(headers))
        case (500...599, _):
            return AppleIDError(
                .serverError, "Apple answered HTTP \(status)", httpStatus: status, appleError: appleError, retryAfter: retryAfter(headers))
        case (_, "invalid_client"?):
            return AppleIDError(
                .invalidClient, "Apple refused the client credentials (invalid_client\(detail)); \(AppleIDError.credentialHint)", httpStatus: status,
                appleError: appleError)
        case (_, "invalid_grant"?) where isTokenEndpoint:
            return AppleIDError(
                .invalidGrant, "the token endpoint answered invalid_grant\(detail); \(AppleIDError.credentialHint)", httpStatus: status,
                appleError: appleError)
        case (401, _):
            return AppleIDError(.invalidToken, "Apple refused the access token (HTTP 401\(detail))", httpStatus: status, appleError: appleError)
        case (_, "invalid_request"?):
            return AppleIDError(
                .invalidRequest,
                "Apple answered invalid_request\(detail.isEmpty ? ": a parameter is wrong for this user, or the user revoked authorization" : detail)",
                httpStatus: status, appleError: appleError)
        case (_, let code?):
            return AppleIDError(isTokenEndpoint ? .invalidGrant : .other, "Apple answered \(code)\(detail)", httpStatus: status, appleError: code)
        default:
            return AppleIDError(.other, "Apple answered HTTP \(status) without an error code", httpStatus: status)
        }
    }

    /// The longest `Retry-After` taken as given, seconds: a longer one reads as this.
    static let maximumRetryAfter: Double = 86_400

    /// `Retry-After` in seconds (delta-seconds, a decimal taken too, or an HTTP date), from 0
    /// to ``maximumRetryAfter``; nil when absent or neither form (`inf` and `nan` are neither).
    static func retryAfter(_ headers: HTTPHeaders) -> Double? {
        guard let value = headers.first(name: "Retry-After")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Double(value), seconds.isFinite { return min(max(0, seconds), maximumRetryAfter) }
        return httpDate(value).map { min(max(0, $0.timeIntervalSinceNow), maximumRetryAfter) }
    }

    /// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`), as `Retry-After` and `Date` carry it.
    static func httpDate(_ value: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value)
    }

    /// Apple's clock: the `Date` of its answer to `GET /auth/keys` (no credentials needed), with
    /// the local times around the call; nil when the answer has none. Throws the call's failure
    /// as an ``AppleIDError``.
    public func appleClock() async throws -> AppleClockReading? {
        var request = HTTPClientRequest(url: endpoints.keys)
        request.headers.add(name: "User-Agent", value: "handover")
        let headers: HTTPHeaders
        let sentAt = Date()
        do {
            let response = try await http.execute(request, timeout: requestTimeout)
            headers = response.headers
            _ = try await response.body.collect(upTo: 1 << 20)
        } catch {
            throw AppleIDClient.classifyTransport(error, url: endpoints.keys)
        }
        let receivedAt = Date()
        return headers.first(name: "Date").flatMap { AppleIDClient.httpDate($0.trimmingCharacters(in: .whitespaces)) }
            .map { AppleClockReading(appleDate: $0, sentAt: sentAt, receivedAt: receivedAt) }
    }

    /// Transport failures: timeouts and everything else that left no answer, naming the URL
    /// called (so that a wrong address shows).
    static func classifyTransport(_ error: any Error, url: String) -> AppleIDError {
        if let http = error as? HTTPClientError, [.deadlineExceeded, .readTimeout, .connectTimeout].contains(http) {
            return AppleIDError(.timeout, "no answer from \(url) in time (\(http))")
        }
        return AppleIDError(.connection, TransportFailure(url: url, error: error).message)
    }
}
