import Basics

/// Body of "rejections summarized": refused deliveries from one source beyond its budget in
/// one minute, answered 429 and summed up here instead of recorded one by one (`serve`'s
/// flood guard). The payloads are not kept, only the first and last one's SHA-256.
public struct RejectionsSummarized: Hashable, Sendable {
    /// The client address the deliveries came from (as `serve` judged it, through a trusted proxy or not).
    public var source: String
    /// The minute they fell in: from this time (inclusive) ...
    public var from: Timestamp
    /// ... to this one (exclusive).
    public var until: Timestamp
    /// Refused deliveries not recorded one by one, by route (`notifications`, `sign-ins`).
    public var counts: [String: Int]
    /// SHA-256 of the first and the last such payload, hex.
    public var firstPayloadSHA256: String
    public var lastPayloadSHA256: String

    public init(source: String, from: Timestamp, until: Timestamp, counts: [String: Int], firstPayloadSHA256: String, lastPayloadSHA256: String) {
        self.source = source
        self.from = from
        self.until = until
        self.counts = counts
        self.firstPayloadSHA256 = firstPayloadSHA256
        self.lastPayloadSHA256 = lastPayloadSHA256
    }

    /// Refused deliveries summed up, on every route.
    public var total: Int { counts.values.reduce(0, +) }
}

extension RejectionsSummarized: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(
            source: try c.field("source", v?.source), from: try c.field("from", v?.from), until: try c.field("until", v?.until),
            counts: try c.field("counts", v?.counts), firstPayloadSHA256: try c.field("first_payload_sha256", v?.firstPayloadSHA256),
            lastPayloadSHA256: try c.field("last_payload_sha256", v?.lastPayloadSHA256))
    }
}
