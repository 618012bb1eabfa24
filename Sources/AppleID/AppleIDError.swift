import Basics
import ExitStatuses

/// An error from Apple's endpoints or from preparing a call, classified by the TN3107 error
/// model so callers can decide: stop the run, record a per-user failure, or retry.
public struct AppleIDError: Error, Sendable, CustomStringConvertible {
    /// The error's class.
    public var code: FailureClass
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

    public init(
        _ code: FailureClass, _ message: String, httpStatus: Int? = nil, appleError: String? = nil, retryAfter: Double? = nil, attempts: Int = 1
    ) {
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
    public static let credentialHint =
        "check the key ID (kid), the team ID (iss), the client ID (sub and client_id), that the key belongs to that team, that the client secret has not expired and that its signature is raw R||S (64 bytes), not DER"

    /// The class and the message, then the HTTP status unless the message already names it
    /// ("Apple is throttling (HTTP 429)"), and the tries when there were several.
    public var description: String {
        var notes: [String] = []
        if let httpStatus, !message.contains("HTTP \(httpStatus)") { notes.append("HTTP \(httpStatus)") }
        if httpStatus != nil, attempts > 1 { notes.append("\(attempts) tries") }
        return "\(code.rawValue): \(message)" + (notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")")
    }
}

extension AppleIDError: ExitStatusDeciding {
    /// Credentials or settings that cannot work are bad usage (exit 2); credentials or a token
    /// Apple refused, exit 3; anything else that ends a command, exit 1.
    public var exitStatus: ExitStatus {
        if code == .invalidConfiguration { return .usage }
        return stopsRun ? .credentialsRefused : .failed
    }

    /// A configuration that cannot work is said in its own words; anything else with its class.
    public var exitMessage: String? { code == .invalidConfiguration ? message : description }
}
