import JWTKit

/// The claims everything Apple signs carries, checked alike for identity tokens and
/// notifications.
protocol AppleClaims: JWTPayload {
    var iss: Claim<String> { get }
    var aud: Claim<Audiences> { get }
    var exp: Claim<NumericDate> { get }
    var iat: Claim<NumericDate> { get }
}

extension AppleClaims {
    /// Nothing: jwt-kit calls this once the signature holds; ``AppleTokenVerifier`` then checks
    /// the claims against its audiences, clock and leeway, each refusal with its reason.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// A Sign in with Apple identity token's claims, as Apple sends them.
struct IdentityTokenClaims: AppleClaims {
    var iss: Claim<String>
    var aud: Claim<Audiences>
    var exp: Claim<NumericDate>
    var iat: Claim<NumericDate>
    var sub: Claim<String>
    /// During a transfer window, the user's `transfer_sub`.
    var transferSub: Claim<String>
    var nonce: Claim<String>
    var nonceSupported: Claim<Bool>
    var email: Claim<String>
    var emailVerified: Claim<Bool>
    var isPrivateEmail: Claim<Bool>
    var realUserStatus: Claim<SmallInteger>

    enum CodingKeys: String, CodingKey {
        case iss, aud, exp, iat, sub, nonce, email
        case transferSub = "transfer_sub"
        case nonceSupported = "nonce_supported"
        case emailVerified = "email_verified"
        case isPrivateEmail = "is_private_email"
        case realUserStatus = "real_user_status"
    }
}

/// A server-to-server notification's claims: the event is in `events`, which real deliveries
/// send as a JSON-encoded string and Apple's page shows as an object.
struct NotificationClaims: AppleClaims {
    var iss: Claim<String>
    var aud: Claim<Audiences>
    var exp: Claim<NumericDate>
    var iat: Claim<NumericDate>
    var jti: Claim<String>
    var events: Claim<Events>

    /// The `events` claim as sent: an object, or a string to be read as one.
    enum Events: ClaimValue {
        case object(NotificationEventClaims)
        case text(String)

        static var expected: String { "an object or a JSON string" }

        init?(claim: any SingleValueDecodingContainer) {
            if let text = try? claim.decode(String.self) {
                self = .text(text)
            } else if let object = try? claim.decode(NotificationEventClaims.self) {
                self = .object(object)
            } else {
                return nil
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .object(let object): try container.encode(object)
            case .text(let text): try container.encode(text)
            }
        }
    }
}

/// The event a notification reports.
struct NotificationEventClaims: Codable, Sendable {
    var type: Claim<String>
    var sub: Claim<String>
    var email: Claim<String>
    var isPrivateEmail: Claim<Bool>
    var eventTime: Claim<EventTime>

    enum CodingKeys: String, CodingKey {
        case type, sub, email
        case isPrivateEmail = "is_private_email"
        case eventTime = "event_time"
    }
}
