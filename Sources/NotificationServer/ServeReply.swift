import Foundation
import Ledger

/// The JSON body of every answer `serve` gives: what happened to a delivery, or the server's
/// health. Absent fields are left out.
struct ServeReply: Encodable, Sendable {
    /// `recorded`, `duplicate`, `ok`, `disk-full`, `unavailable`.
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

    enum CodingKeys: String, CodingKey {
        case status, error, reason, detail, sequence, head, freeBytes = "free_bytes"
    }

    /// The body: keys sorted, slashes unescaped. Encoding fails only on a non-finite number,
    /// which a reply never holds.
    var encoded: Data {
        (try? JSONEncoder.sortedKeys().encode(self)) ?? Data("{}".utf8)
    }
}
