import Crypto
import Foundation

/// A `user.migration` access token. Its description shows only the fingerprint; the token
/// is never logged or recorded.
public struct AccessToken: Sendable, CustomStringConvertible {
    /// The bearer token.
    public let value: String
    public let issuedAt: Date
    /// `expires_in`, seconds.
    public let lifetime: Double

    public var expiresAt: Date { issuedAt.addingTimeInterval(lifetime) }

    /// The first 16 hex digits of the token's SHA-256: enough to tell tokens apart in the log.
    public var fingerprint: String { AccessToken.fingerprint(of: value) }

    /// The fingerprint of any secret string.
    public static func fingerprint(of secret: String) -> String {
        SHA256.hash(data: Data(secret.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether the token should be replaced at `now` under `renewal` (before it expires,
    /// never after a failure).
    public func needsRefresh(at now: Date, renewal: TokenRenewal = TokenRenewal()) -> Bool {
        now >= expiresAt.addingTimeInterval(-renewal.margin(lifetime: lifetime))
    }

    public var description: String { "AccessToken(\(fingerprint)…, expires \(expiresAt))" }
}
