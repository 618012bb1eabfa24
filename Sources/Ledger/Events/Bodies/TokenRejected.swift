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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("detail", detail)
        w.field("payload_sha256", payloadSHA256)
        w.field("reason", reason)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(reason: try r.string("reason"), detail: try r.string("detail"), payloadSHA256: try r.string("payload_sha256"))
    }
}
