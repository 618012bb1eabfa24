import Foundation
import Ledger
import Projections

/// The JSON body of every answer `serve` gives: what happened to a delivery, or the server's
/// health. Absent fields are left out.
struct ServeReply: Sendable {
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
    /// A sign-in's or lookup's user (``UserLookup``): whether the `account_id` is known, and
    /// which account it is, with the user's state on this side.
    var correlated: Bool?
    var accountID: String?
    var package: Int?
    var state: String?
    var migratedVia: String?
    var migratedAt: String?
    var transferSub: String?
    var recipientSub: String?

    /// Adds what `lookup` found: the user's account and state, or why there is none (`reason`
    /// and `detail`).
    mutating func describe(_ lookup: UserLookup) {
        correlated = lookup.correlated
        if let user = lookup.user {
            accountID = user.accountID
            package = user.package
            state = user.status.name
            migratedVia = user.migratedVia?.name
            migratedAt = user.migratedAt?.rfc3339
            transferSub = user.transferSub
            recipientSub = user.recipientSub
        }
        if let miss = lookup.miss {
            reason = miss.rawValue
            detail = lookup.missDetail
        }
    }

    /// The body: keys sorted, absent values left out (written directly: a lookup's answer is
    /// on the backend's sign-in path).
    var encoded: Data {
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.field("account_id", accountID)
        w.field("correlated", correlated)
        w.field("detail", detail)
        w.field("error", error)
        if let freeBytes { w.key("free_bytes"); w.int(freeBytes) }
        if let head { w.key("head"); w.int(head) }
        w.field("migrated_at", migratedAt)
        w.field("migrated_via", migratedVia)
        w.field("package", package)
        w.field("reason", reason)
        w.field("recipient_sub", recipientSub)
        if let sequence { w.key("sequence"); w.int(sequence) }
        w.field("state", state)
        w.field("status", status)
        w.field("transfer_sub", transferSub)
        w.endObject()
        return Data(w.bytes)
    }
}
