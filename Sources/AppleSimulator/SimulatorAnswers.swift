import Foundation
import Ledger

/// The stand-in's answers, shaped as Apple's endpoints give them, as Codable values.
enum SimulatorAnswers {
    /// `POST /auth/token`, 200.
    struct Token: Encodable {
        var accessToken: String
        var tokenType = "Bearer"
        var expiresIn: Int

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in"
        }
    }

    /// `POST /auth/usermigrationinfo` for team A, 200.
    struct TransferID: Encodable {
        var transferSub: String

        enum CodingKeys: String, CodingKey { case transferSub = "transfer_sub" }
    }

    /// `POST /auth/usermigrationinfo` for team B, 200 (absent fields left out).
    struct Exchange: Encodable {
        var sub: String
        var email: String?
        var isPrivateEmail: Bool?

        enum CodingKeys: String, CodingKey { case sub, email, isPrivateEmail = "is_private_email" }
    }

    /// An error answer (RFC 6749 section 5.2).
    struct Failure: Encodable {
        var error: String
        var errorDescription: String

        enum CodingKeys: String, CodingKey { case error, errorDescription = "error_description" }
    }

    /// `value` as JSON text, keys sorted and slashes unescaped. Encoding fails only on a
    /// non-finite number, which none of the stand-in's answers holds.
    static func text(_ value: some Encodable) -> String {
        (try? JSONEncoder.sortedKeys().encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
