import Ledger

/// One apply batch's row about one user: what `apply` planned and what became of their
/// account, read from the batch's "apply settled" event and its "apply intended". Those events
/// name many users; this is the one user's part, for their history and their evidence.
public struct UserApplyRow: Sendable, Equatable {
    /// The "apply settled" event, and when it was recorded.
    public var sequence: UInt64
    public var recordedAt: Timestamp
    public var run: String
    public var batch: Int
    /// The account's index in the batch, from 0.
    public var index: Int
    /// Whether the batch belongs to an undo run.
    public var undo: Bool
    public var outcome: ApplyOutcome
    /// The "apply intended" event, and the account's value as read and the value it was to take
    /// (nil for NULL); all nil when that event cannot be found.
    public var intentSequence: UInt64?
    public var old: String?
    public var new: String?

    /// `event`'s row about `user`, nil when it is not a committed "apply settled" naming them.
    /// `event` may be as logged: a v2 batch's stored lines are then read, checked against the
    /// batch's root, and only the user's line is decoded.
    public init?(_ event: RecordedEvent, about user: UserState, view: LogView) throws {
        guard case .applySettled(let b) = event.body, let account = user.accountID, let run = event.actor.runID else { return nil }
        let outcome: ApplyOutcome
        let i: Int
        if b.lacksRows {
            let lines = try view.storedRows(of: event.sequence, count: b.rowCount)
            try b.checkStored(lines)
            guard let found = ApplyRowLine.index(ofAccount: account, in: lines),
                case .settled(_, let settled?, _)? = ApplyRowLine(lines[found], kind: .applySettledRow)
            else { return nil }
            (i, outcome) = (found, settled)
        } else {
            guard let found = b.accountIDs.firstIndex(of: account), found < b.outcomes.count else { return nil }
            (i, outcome) = (found, b.outcomes[found])
        }
        (sequence, recordedAt, self.run, batch, index, undo, self.outcome) = (event.sequence, event.recordedAt, run, b.batch, i, b.undo, outcome)
        guard let intended = try view.sequence(forIdempotencyKey: ApplyIntended.idempotencyKey(run: run, batch: b.batch)),
            case .applyIntended(let intent)? = try view.eventAsLogged(intended)?.body, i < intent.rowCount
        else { return }
        if intent.lacksRows {
            let lines = try view.storedRows(of: intended, count: intent.rowCount + intent.collisionCount)
            try intent.checkStored(lines)
            if case .intended(account, let old, let new, _, _, _)? = ApplyRowLine(lines[i], kind: .applyIntendedRow) {
                (intentSequence, self.old, self.new) = (intended, old, new)
            }
        } else if intent.accountIDs[i] == account {
            (intentSequence, old, new) = (intended, intent.oldValues[i], intent.newValues[i])
        }
    }

    /// The row in one line, as a user's history shows it.
    public var line: String {
        (undo ? "undo run " : "apply run ") + "\(run) batch \(batch): \(outcome.rawValue)"
            + (intentSequence.map { ", \(old ?? "NULL") → \(new ?? "NULL") (intended in event \($0))" } ?? "")
    }

    /// The row as an evidence bundle's manifest lists it (schemas/evidence-bundle.md).
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "seq": .int(Int64(sequence)), "recorded_at": .string(recordedAt.rfc3339), "run": .string(run),
            "batch": .int(Int64(batch)), "undo": .bool(undo), "outcome": .string(outcome.rawValue),
        ]
        if let intentSequence {
            members["intent_seq"] = .int(Int64(intentSequence))
            members["old_value"] = old.map(JSONValue.string) ?? .null
            members["new_value"] = new.map(JSONValue.string) ?? .null
        }
        return .object(members)
    }
}
