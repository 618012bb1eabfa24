import Basics
import Ledger
import Projections

/// What `apply` prints: the counts, each collision with what the ledger knows about it, and
/// the cells by account as CSV or JSON (`--format`), with the accounts whose relay address stays
/// team A's. Values from outside are data: CSV fields are quoted, JSON strings escaped, and the
/// text form shows them escaped.
public struct ApplyListing: Sendable {
    /// One cell's line (or one stale relay address's).
    public struct Row: Sendable, Equatable {
        public var accountID: String
        public var transferSub: String?
        public var column: ApplyColumn
        public var old: String?
        public var new: String?
        /// The planned outcome (`change`, `already`, `kept`, `no-account`, `collision`) or, after
        /// a commit, what became of it; `stale` for an account whose relay address no cell
        /// replaces.
        public var outcome: String
        public var holders: [String]
        /// For a collision, what the ledger knows about it; for a stale address, why it stays.
        public var explanation: String?
        /// For a stale address, why it stays.
        public var staleReason: StaleAddress.Reason?
    }

    /// The outcome a stale relay address is listed with.
    public static let stale = "stale"

    public var rows: [Row]

    /// The listing of a plan, collisions explained from `snapshot`.
    public init(plan: ApplyPlan, snapshot: any ProjectionSnapshot) throws {
        rows =
            try plan.entries.flatMap { entry in
                try entry.cells.map { try Self.row(entry, $0, outcome: $0.planned.rawValue, snapshot) }
            } + plan.staleAddresses.sorted { $0.accountID < $1.accountID }.map(Self.row)
    }

    /// The listing of a commit's cells not applied, collisions explained from `snapshot`, and
    /// its stale relay addresses.
    public init(result: ApplyRun.Result, snapshot: any ProjectionSnapshot) throws {
        rows =
            try result.notApplied.map { item in
                try Self.row(item.entry, item.entry.cell(item.column)!, outcome: item.outcome.rawValue, snapshot)
            } + result.staleAddresses.sorted { $0.accountID < $1.accountID }.map(Self.row)
    }

    private static func row(
        _ entry: ApplyPlan.Entry, _ cell: ApplyPlan.Entry.Cell, outcome: String, _ snapshot: any ProjectionSnapshot
    ) throws
        -> Row
    {
        let kept = cell.planned == .kept
        var row = Row(
            accountID: entry.accountID, transferSub: entry.transferSub, column: cell.column, old: kept ? nil : cell.old, new: kept ? nil : cell.new,
            outcome: outcome, holders: cell.holders)
        if outcome == ApplyOutcome.collision.rawValue {
            row.explanation = try explanation(entry, cell, snapshot)
        }
        return row
    }

    private static func row(_ stale: StaleAddress) -> Row {
        Row(
            accountID: stale.accountID, transferSub: stale.transferSub, column: .email, outcome: Self.stale, holders: [],
            explanation: stale.reason.explanation, staleReason: stale.reason)
    }

    /// What the ledger knows about a collision: whether the user signed in with the new `sub`
    /// before it was applied (the sign-in race), and whose the accounts holding it are.
    static func explanation(_ entry: ApplyPlan.Entry, _ cell: ApplyPlan.Entry.Cell, _ snapshot: any ProjectionSnapshot) throws -> String {
        let held =
            cell.holders.isEmpty
            ? "another account"
            : (cell.holders.count == 1 ? "account " : "accounts ") + cell.holders.map(InertText.forScreen).joined(separator: ", ")
        var parts: [String] = []
        let user = try snapshot.user(with: Identifier(.accountID, entry.accountID))
        if cell.column == .email {
            parts.append(
                "\(held) holds this relay address already (the user made a second account with it, or it was loaded by other means): the address is not written twice"
            )
        } else if let user, user.migratedVia == .signIn, let at = user.migratedAt {
            parts.append(
                "the user signed in with the new sub at \(at.rfc3339), during the window and before it was applied (the sign-in race): \(held) was most likely made for them then"
            )
        } else {
            parts.append(
                "the ledger records no sign-in before the exchange for this user; \(held) holds the new sub by other means (made by hand, an earlier import)"
            )
        }
        for holder in cell.holders {
            if let other = try snapshot.user(with: Identifier(.accountID, holder)) {
                parts.append(
                    "account \(InertText.forScreen(holder)) is team A's account of another handed-over user (transfer_sub \(InertText.forScreen(other.transferSub ?? "unknown"))): check both before merging"
                )
            }
        }
        return parts.joined(separator: "; ")
    }

    /// The columns of the CSV form, in order.
    public static let columns = ["account_id", "transfer_sub", "column", "old_value", "new_value", "outcome", "holders", "explanation"]

    /// The rows as CSV: a header, then one CRLF-ended line a cell; holders joined by spaces.
    public var csv: String {
        var out = CSVField.line(Self.columns)
        for row in rows {
            out += CSVField.line([
                row.accountID, row.transferSub ?? "", row.column.rawValue, row.old ?? "", row.new ?? "", row.outcome,
                row.holders.joined(separator: " "), row.explanation ?? "",
            ])
        }
        return out
    }

    /// The rows as JSON lines: one object a cell, absent values left out.
    public var jsonLines: String {
        var out = ""
        for row in rows {
            var w = JSONWriter(capacity: 256)
            w.beginObject()
            w.field("account_id", row.accountID)
            w.field("column", row.column.rawValue)
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
        rows.filter { $0.outcome == ApplyOutcome.collision.rawValue }.map { row in
            let what = row.column == .recipientSub ? "new sub" : "new \(row.column.rawValue)"
            return "  account \(InertText.forScreen(row.accountID)) (\(what) \(InertText.forScreen(row.new ?? ""))): \(row.explanation ?? "")\n"
        }.joined()
    }

    /// The accounts whose rows have `outcome`, escaped, each once, at most `limit` of them
    /// named and the rest counted.
    func accounts(_ outcome: String, limit: Int = 20, describe: (Row) -> String = { InertText.forScreen($0.accountID) }) -> String {
        var seen = Set<String>()
        let named = rows.filter { $0.outcome == outcome && seen.insert($0.accountID).inserted }.sorted { $0.accountID < $1.accountID }
        let shown = named.prefix(limit).map(describe).joined(separator: ", ")
        return named.count > limit ? shown + " and \(named.count - limit) more (--format csv lists them all)" : shown
    }
}

extension StaleAddress.Reason {
    /// Why, in a few words.
    var summary: String {
        switch self {
        case .notMigrated: "not migrated"
        case .noRelayAddress: "no relay address from Apple"
        case .erased: "erased"
        }
    }

    /// Why the account's relay address stays team A's, in words.
    var explanation: String {
        switch self {
        case .notMigrated: "the user has not migrated: no team B address is known yet"
        case .noRelayAddress: "the user migrated, and Apple gave them no private relay address for team B"
        case .erased: "the user's personal data was erased: their address cannot be opened"
        }
    }
}
