/// The class of a call to Apple that did not succeed: Apple's TN3107 error codes, throttling,
/// server errors and the transport's failures. The one list, used by the errors the calls throw
/// (`AppleIDError`) and by the events that record them (``CallFailure``), so a ledger records the
/// class Apple gave.
public enum FailureClass: String, CaseIterable, Sendable {
    /// TN3107 `invalid_request`: this user's call is wrong or the user revoked consent.
    case invalidRequest = "invalid_request"
    /// TN3107 `invalid_client`: Apple refused the credentials.
    case invalidClient = "invalid_client"
    /// `invalid_grant` from the token endpoint.
    case invalidGrant = "invalid_grant"
    /// HTTP 401: Apple refused the access token.
    case invalidToken = "invalid_token"
    /// HTTP 429.
    case rateLimited = "rate_limited"
    /// HTTP 5xx.
    case serverError = "server_error"
    /// No answer in time.
    case timeout = "timeout"
    /// The connection failed or was dropped.
    case connection = "connection"
    /// A 200 whose body is not what Apple documents.
    case invalidResponse = "invalid_response"
    /// Credentials or settings that cannot work, found before calling Apple.
    case invalidConfiguration = "invalid_configuration"
    /// Any other answer.
    case other = "other"
}
