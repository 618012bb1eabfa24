/// An error from Apple's endpoints or from preparing a call, classified by the TN3107 error
/// model so callers can decide: stop the run, record a per-user failure, or retry.
public struct AppleIDError: Error, Sendable, CustomStringConvertible {
    /// The class of an error.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// TN3107 `invalid_request`: this user's call is wrong or the user revoked consent.
        public static let invalidRequest = Code(rawValue: "invalid_request")
        /// TN3107 `invalid_client`: Apple refused the credentials.
        public static let invalidClient = Code(rawValue: "invalid_client")
        /// `invalid_grant` from the token endpoint.
        public static let invalidGrant = Code(rawValue: "invalid_grant")
        /// HTTP 401: Apple refused the access token.
        public static let invalidToken = Code(rawValue: "invalid_token")
        /// HTTP 429.
        public static let rateLimited = Code(rawValue: "rate_limited")
        /// HTTP 5xx.
        public static let serverError = Code(rawValue: "server_error")
        /// No answer in time.
        public static let timeout = Code(rawValue: "timeout")
        /// The connection failed or was dropped.
        public static let connection = Code(rawValue: "connection")
        /// A 200 whose body is not what Apple documents.
        public static let invalidResponse = Code(rawValue: "invalid_response")
        /// Credentials or settings that cannot work, found before calling Apple.
        public static let invalidConfiguration = Code(rawValue: "invalid_configuration")
        /// Any other answer.
        public static let other = Code(rawValue: "other")
    }

    public var code: Code
    /// What happened, for people. Never contains a secret or token.
    public var message: String
    /// The HTTP status, when an answer arrived.
    public var httpStatus: Int?
    /// The `error` field Apple sent, when there was one.
    public var appleError: String?
    /// The `error_description` Apple sent, as received, when there was one.
    public var appleDescription: String?
    /// Seconds Apple asked to wait (`Retry-After`).
    public var retryAfter: Double?
    /// How many attempts were made.
    public var attempts: Int

    public init(_ code: Code, _ message: String, httpStatus: Int? = nil, appleError: String? = nil, retryAfter: Double? = nil, attempts: Int = 1) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.appleError = appleError
        self.retryAfter = retryAfter
        self.attempts = attempts
    }

    /// Worth another attempt: throttling, server errors, timeouts, dropped connections.
    public var isTransient: Bool {
        [.rateLimited, .serverError, .timeout, .connection].contains(code)
    }

    /// Stops a whole run: the credentials or the token are refused, so every user would fail.
    public var stopsRun: Bool {
        [.invalidClient, .invalidGrant, .invalidToken, .invalidConfiguration].contains(code)
    }

    /// What to check when Apple refuses the credentials.
    public static let credentialHint = "check the key ID (kid), the team ID (iss), the client ID (sub and client_id), that the key belongs to that team, that the client secret has not expired and that its signature is raw R||S (64 bytes), not DER"

    /// The class and the message, then the HTTP status unless the message already names it
    /// ("Apple is throttling (HTTP 429)"), and the tries when there were several.
    public var description: String {
        var notes: [String] = []
        if let httpStatus, !message.contains("HTTP \(httpStatus)") { notes.append("HTTP \(httpStatus)") }
        if httpStatus != nil, attempts > 1 { notes.append("\(attempts) tries") }
        return "\(code.rawValue): \(message)" + (notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")")
    }
}
