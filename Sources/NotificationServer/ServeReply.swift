import Foundation
import Ledger
import Projections

/// The JSON body of every answer `serve` gives: what happened to a delivery, or the server's
/// health. Absent fields are left out.
struct ServeReply: Sendable {
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

    /// The body: keys sorted, absent values left out.
    var encoded: Data {
        var members: [String: JSONValue] = [:]
        for (name, value) in [("status", status), ("error", error), ("reason", reason), ("detail", detail)] {
            if let value { members[name] = .string(value) }
        }
        if let sequence { members["sequence"] = .int(Int64(sequence)) }
        if let head { members["head"] = .int(Int64(head)) }
        if let freeBytes { members["free_bytes"] = .int(freeBytes) }
        for (name, value) in lookup?.members ?? [] { members[name] = value }
        return Data(JSONValue.object(members).canonicalBytes)
    }
}
