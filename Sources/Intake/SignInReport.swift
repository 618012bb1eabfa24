import Basics
import Foundation
import Ledger

/// The body of `POST /apple/sign-ins`: `{"identity_token": "...", "nonce": "..."}`, or the
/// bare token. Anything else (a body that is not UTF-8 or repeats a member included) goes
/// through as-is and is refused by verification.
public struct SignInReport: Sendable {
    public var token: String
    public var nonce: String?
    /// The token's bytes as they arrived: what a refusal's payload hash is taken of (a body
    /// that is not UTF-8 reaches ``token`` with U+FFFD in place of its bad bytes).
    public var received: Data

    public init(_ body: Data) {
        // A body that is not a JSON object is expected (a bare token): it is taken as the token.
        if let object = try? JSONValue.parseObject(untrusted: Array(body)), let token = object["identity_token"]?.stringValue {
            self.token = token
            self.nonce = object["nonce"]?.stringValue
            self.received = Data(token.utf8)
        } else {
            self.token = String(decoding: body, as: UTF8.self)
            self.received = body
        }
    }
}
