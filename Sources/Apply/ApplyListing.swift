import Ledger
import Projections

/// What `apply` prints: the counts, each collision with what the ledger knows about it, and
/// the accounts by user as CSV or JSON (`--format`). Values from outside are data: CSV fields
/// are quoted, JSON strings escaped, and the text form shows them escaped.
public struct ApplyListing: Sendable {
    /// One account's line.
    public struct Row: Sendable, Equatable {
        public var accountID: String
        public var transferSub: String?
        public var old: String?
        public var new: String?
        /// The planned outcome (`change`, `already`, `no-account`, `collision`) or, after a
        /// commit, what became of it.
        public var outcome: String
        public var holders: [String]
        /// For a collision, what the ledger knows about it.
        public var explanation: String?
    }

    public var rows: [Row]

    /// The listing of a plan, collisions explained from `snapshot`.
    public init(plan: ApplyPlan, snapshot: any ProjectionSnapshot) throws {
        rows = try plan.entries.map { try Self.row($0, outcome: $0.outcome.rawValue, snapshot) }
    }

    /// The listing of a commit's accounts not applied, collisions explained from `snapshot`.
    public init(notApplied: [(entry: ApplyPlan.Entry, outcome: ApplyOutcome)], snapshot: any ProjectionSnapshot) throws {
        rows = try notApplied.map { try Self.row($0.entry, outcome: $0.outcome.rawValue, snapshot) }
    }

    private static func row(_ entry: ApplyPlan.Entry, outcome: String, _ snapshot: any ProjectionSnapshot) throws -> Row {
        var row = Row(
            accountID: entry.accountID, transferSub: entry.transferSub, old: entry.old, new: entry.new, outcome: outcome, holders: entry.holders)
        if outcome == ApplyOutcome.collision.rawValue {
            row.explanation = try explanation(entry, snapshot)
        }
        return row
    }

    /// What the ledger knows about a collision: whether the user signed in with the new `sub`
    /// before it was applied (the sign-in race), and whose the accounts holding it are.
    static func explanation(_ entry: ApplyPlan.Entry, _ snapshot: any ProjectionSnapshot) throws -> String {
        let held =
            entry.holders.isEmpty
            ? "another account"
            : (entry.holders.count == 1 ? "account " : "accounts ") + entry.holders.map(InertText.forScreen).joined(separator: ", ")
        var parts: [String] = []
        let user = try snapshot.user(with: Identifier(.accountID, entry.accountID))
        if let user, user.migratedVia == .signIn, let at = user.migratedAt {
            parts.append(
                "the user signed in with the new sub at \(at.rfc3339), during the window and before it was applied (the sign-in race): \(held) was most likely made for them then"
            )
        } else {
            parts.append(
                "the ledger records no sign-in before the exchange for this user; \(held) holds the new sub by other means (made by hand, an earlier import)"
            )
        }
        for holder in entry.holders {
            if let other = try snapshot.user(with: Identifier(.accountID, holder)) {
                parts.append(
                    "account \(InertText.forScreen(holder)) is team A's account of another handed-over user (transfer_sub \(InertText.forScreen(other.transferSub ?? "unknown"))): check both before merging"
                )
            }
        }
        return parts.joined(separator: "; ")
    }

    /// The columns of the CSV form, in order.
    public static let columns = ["account_id", "transfer_sub", "old_value", "new_value", "outcome", "holders", "explanation"]

    /// The rows as CSV: a header, then one CRLF-ended line an account; holders joined by spaces.
    public var csv: String {
        var out = CSVField.line(Self.columns)
        for row in rows {
            out += CSVField.line([
                row.accountID, row.transferSub ?? "", row.old ?? "", row.new ?? "", row.outcome, row.holders.joined(separator: " "),
                row.explanation ?? "",
            ])
        }
        return out
    }

    /// The rows as JSON lines: one object an account, absent values left out.
    public var jsonLines: String {
        var out = ""
        for row in rows {
            var w = JSONWriter(capacity: 256)
            w.beginObject()
            w.field("account_id", row.accountID)
            w.field("explanation", row.explanation)
            w.field("holders", strings: row.holders)
            w.field("new_value", row.new)
            w.field("old_value", row.old)
            w.field("outcome", row.outcome)
            w.field("transfer_sub", row.transferSub)
            w.endObject()
            out += String(decoding: w.bytes, as: UTF8.self) + "\n"
        }
        return out
    }

    /// The collisions in words, one paragraph each.
    public var collisionsText: String {
        rows.filter { $0.explanation != nil }.map { row in
            "  account \(InertText.forScreen(row.accountID)) (new sub \(InertText.forScreen(row.new ?? ""))): \(row.explanation!)\n"
        }.joined()
    }
}
