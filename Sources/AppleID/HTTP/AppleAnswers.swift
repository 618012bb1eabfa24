import Foundation

/// What Apple's REST endpoints answer, as Codable values. Each field is read leniently: one of
/// an unexpected type reads as absent, so the caller's check names the field ("answered 200
/// without an access_token") rather than a decoding path.
package enum AppleAnswers {
    /// `POST /auth/token`, 200.
    package struct Token: Decodable {
        var accessToken: String?
        var tokenType: String?
        var expiresIn: Double?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in"
        }

        package init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            accessToken = c.lenient(String.self, .accessToken)
            tokenType = c.lenient(String.self, .tokenType)
            expiresIn = c.lenient(Double.self, .expiresIn)
        }
    }

    /// `POST /auth/usermigrationinfo`, 200: team A's `transfer_sub`, or team B's `sub` and email.
    package struct MigrationInfo: Decodable {
        var transferSub: String?
        var sub: String?
        var email: String?
        /// Apple may send it as `true`, `"true"` or 1.
        var isPrivateEmail: Bool?

        enum CodingKeys: String, CodingKey {
            case transferSub = "transfer_sub", sub, email, isPrivateEmail = "is_private_email"
        }

        package init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            transferSub = c.lenient(String.self, .transferSub)
            sub = c.lenient(String.self, .sub)
            email = c.lenient(String.self, .email)
            isPrivateEmail =
                c.lenient(Bool.self, .isPrivateEmail)
                ?? c.lenient(String.self, .isPrivateEmail).flatMap { $0 == "true" ? true : $0 == "false" ? false : nil }
                ?? c.lenient(Double.self, .isPrivateEmail).map { $0 != 0 }
        }
    }

    /// Any error answer (RFC 6749 section 5.2): `error` and `error_description`.
    package struct Failure: Decodable {
        var error: String?
        var errorDescription: String?

        enum CodingKeys: String, CodingKey {
            case error, errorDescription = "error_description"
        }

        package init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            error = c.lenient(String.self, .error)
            errorDescription = c.lenient(String.self, .errorDescription)
        }
    }

    /// A JSON Web Key Set (`/auth/keys`): its keys' fields as published.
    package struct KeySet: Decodable {
        var keys: [Key]

        struct Key: Decodable {
            var kty, kid, use, alg, n, e: String?

            enum CodingKeys: String, CodingKey { case kty, kid, use, alg, n, e }

            package init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                kty = c.lenient(String.self, .kty)
                kid = c.lenient(String.self, .kid)
                use = c.lenient(String.self, .use)
                alg = c.lenient(String.self, .alg)
                n = c.lenient(String.self, .n)
                e = c.lenient(String.self, .e)
            }
        }
    }

    /// `body` decoded as `T`, or nil when it is not a JSON object of that shape.
    static func decode<T: Decodable>(_ type: T.Type, from body: Data) -> T? {
        // A body of another shape is expected (a proxy's HTML page): the caller reports the status and the text.
        try? JSONDecoder().decode(type, from: body)
    }
}

extension KeyedDecodingContainer {
    /// The member `key` as `T`, or nil when it is absent, null or of another type.
    func lenient<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
        // A member of another type is expected from an answer that changed: it reads as absent.
        (try? decodeIfPresent(type, forKey: key)) ?? nil
    }
}
