import Basics

/// Body of "sign-in rejected" and "notification rejected": why a token was refused. The
/// payload itself is not kept, only its SHA-256.
public struct TokenRejected: Hashable, Sendable {
    /// A stable reason code (`bad-signature`, `expired`, `unknown-kid`, ...).
    public var reason: String
    /// Details for people.
    public var detail: String
    /// SHA-256 of the payload as received, hex.
    public var payloadSHA256: String

    public init(reason: String, detail: String, payloadSHA256: String) {
        self.reason = reason
        self.detail = detail
        self.payloadSHA256 = payloadSHA256
    }
}

extension TokenRejected: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            reason: try c.field("reason", v?.reason), detail: try c.field("detail", v?.detail),
            payloadSHA256: try c.field("payload_sha256", v?.payloadSHA256))
    }
}
