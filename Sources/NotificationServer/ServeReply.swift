import Foundation
import Hummingbird
import Ledger
import Projections

/// The JSON body of every answer `serve` gives: what happened to a delivery, or the server's
/// health. Absent fields are left out; the members are written in sorted order by the
/// context's encoder (``ServeRequestContext/responseEncoder``).
struct ServeReply: ResponseEncodable, Sendable {
    /// `recorded`, `duplicate`, `ok`, `found`, `disk-full`, `unavailable`.
    var status: String?
    /// Why the delivery was not recorded: `rejected`, `unauthorized`, `too_many_rejections`, ...
    var error: String?
    /// The refusal's reason (``TokenRejection/Reason``).
    var reason: String?
    /// For people; outside text in it is escaped as JSON escapes it.
    var detail: String?
    /// The event recorded (or the refusal recorded) for this delivery.
    var sequence: UInt64?
    /// `/healthz`: the ledger's last sequence.
    var head: UInt64?
    /// `/healthz` on a full disk: the bytes left.
    var freeBytes: Int64?
    /// A sign-in's or lookup's user: its members (``UserLookup/members``, as `handover lookup`
    /// prints them) join the answer's.
    var lookup: UserLookup?

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Member.self)
        for (name, value) in [("status", status), ("error", error), ("reason", reason), ("detail", detail)] {
            if let value { try container.encode(value, forKey: Member(name)) }
        }
        try container.encodeIfPresent(sequence, forKey: Member("sequence"))
        try container.encodeIfPresent(head, forKey: Member("head"))
        try container.encodeIfPresent(freeBytes, forKey: Member("free_bytes"))
        for (name, value) in lookup?.members ?? [] { try container.encode(value, forKey: Member(name)) }
    }

    /// This reply with `status` and any further headers, never cached.
    func answer(_ status: HTTPResponse.Status, _ headers: HTTPFields = [:]) -> EditedResponse<ServeReply> {
        var fields: HTTPFields = [.cacheControl: "no-store"]
        fields.append(contentsOf: headers)
        return EditedResponse(status: status, headers: fields, response: self)
    }

    /// A member's name.
    struct Member: CodingKey {
        let stringValue: String
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}
