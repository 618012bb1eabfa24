import Foundation
import Ledger
import Projections

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

    enum CodingKeys: String, CodingKey {
        case status, error, reason, detail, sequence, head, freeBytes = "free_bytes", correlated, accountID = "account_id", package, state,
             migratedVia = "migrated_via", migratedAt = "migrated_at", transferSub = "transfer_sub", recipientSub = "recipient_sub"
    }

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

    /// The body: keys sorted, slashes unescaped. Encoding fails only on a non-finite number,
    /// which a reply never holds.
    var encoded: Data {
        (try? JSONEncoder.sortedKeys().encode(self)) ?? Data("{}".utf8)
    }
}
