import Basics
import Ledger
import LogEngine

/// One apply batch's row about one user: what `apply` planned and what became of each column
/// of their account, read from the batch's "apply settled" event and its "apply intended".
/// Those events name many users; this is the one user's part, for their history and their
/// evidence.
public struct UserApplyRow: Sendable, Equatable {
    /// One column of the row: its outcome and, when the intent was found, the value the plan read
    /// and the value it was to take (nil for NULL; an email's sealed with the user's data key).
    public struct Cell: Sendable, Equatable {
        public var column: ApplyColumn
        public var outcome: ApplyOutcome
        public var old: ApplyValue?
        public var new: ApplyValue?
    }

    /// The "apply settled" event, and when it was recorded.
    public var sequence: UInt64
    public var recordedAt: Timestamp
    public var run: String
    public var batch: Int
    /// The account's index in the batch, from 0.
    public var index: Int
    /// Whether the batch belongs to an undo run.
    public var undo: Bool
    /// The row's cells, in column order.
    public var cells: [Cell]
    /// The "apply intended" event; nil when it cannot be found (the cells then have no values).
    public var intentSequence: UInt64?

    /// `event`'s row about `user`, nil when it is not a committed "apply settled" naming them.
    /// `event` may be as logged: a v2 batch's stored lines are then read, checked against the
    /// batch's root, and only the user's line is decoded.
    public init?(_ event: RecordedEvent, about user: UserState, view: LogView) throws {
        guard case .applySettled(let b) = event.body, let account = user.accountID, let run = event.actor.runID else { return nil }
        let outcomes: [ApplyCellOutcome]
        let i: Int
        if b.lacksRows {
            let lines = try view.storedRows(of: event.sequence, count: b.rowCount)
            try b.checkStored(lines)
            guard let found = ApplyRowLine.index(ofAccount: account, in: lines),
                case .settled(_, let settled?, _)? = ApplyRowLine(lines[found], kind: .applySettledRow)
            else { return nil }
            (i, outcomes) = (found, settled)
        } else {
            guard let found = b.accountIDs.firstIndex(of: account), !b.rows[found].outcomes.isEmpty else { return nil }
            (i, outcomes) = (found, b.rows[found].outcomes)
        }
        (sequence, recordedAt, self.run, batch, index, undo) = (event.sequence, event.recordedAt, run, b.batch, i, b.undo)
        cells = outcomes.map { Cell(column: $0.column, outcome: $0.outcome) }
        guard let intended = try view.sequence(forIdempotencyKey: ApplyIntended.idempotencyKey(run: run, batch: b.batch)),
            case .applyIntended(let intent)? = try view.eventAsLogged(intended)?.body, i < intent.rowCount
        else { return }
        let planned: [ApplyCell]
        if intent.lacksRows {
            let lines = try view.storedRows(of: intended, count: intent.rowCount + intent.collisionCount)
            try intent.checkStored(lines)
            guard case .intended(account, let found, _)? = ApplyRowLine(lines[i], kind: .applyIntendedRow) else { return }
            planned = found.map { ApplyCell(column: $0.column, old: $0.old, new: $0.new, planned: $0.planned) }
        } else {
            guard intent.rows[i].account == account else { return }
            planned = intent.rows[i].cells
        }
        intentSequence = intended
        for (c, cell) in cells.enumerated() {
            guard let intendedCell = planned.first(where: { $0.column == cell.column }) else { continue }
            (cells[c].old, cells[c].new) = (intendedCell.old, intendedCell.new)
        }
    }

    /// The row's cell of `column`.
    public func cell(_ column: ApplyColumn) -> Cell? { cells.first { $0.column == column } }

    /// The row in one line, as a user's history shows it: each column's outcome and values, an
    /// email's opened with `sealer` (shown `sealed` without one, or once the user is erased). A
    /// row of the `sub` alone names no column, as before other columns were set.
    public func line(opening sealer: Sealer? = nil) -> String {
        let parts = cells.map { cell in
            ApplyCellText.Part(
                cell.column, cell.outcome.rawValue, values: intentSequence == nil || cell.outcome == .kept ? nil : (cell.old, cell.new))
        }
        let text = ApplyCellText.line(parts) { value in ApplyCellText.shown(value) { (try? sealer?.open($0)) ?? nil } }
        return (undo ? "undo run " : "apply run ") + "\(run) batch \(batch): " + text + (intentSequence.map { " (intended in event \($0))" } ?? "")
    }

    /// The batch's intent as a user's history shows it, before the row's settlement.
    public var intentLine: String {
        (undo ? "undo run " : "apply run ") + "\(run) batch \(batch) intended for this account (row \(index + 1)); settled in event \(sequence)"
    }

    /// The row as an evidence bundle's manifest lists it (schemas/evidence-bundle.md): a batch
    /// written before v2, whose one cell is the `sub`'s.
    public var json: JSONValue {
        let cell = cell(.recipientSub) ?? cells[0]
        var members: [String: JSONValue] = [
            "seq": .int(Int64(sequence)), "recorded_at": .string(recordedAt.rfc3339), "run": .string(run),
            "batch": .int(Int64(batch)), "undo": .bool(undo), "outcome": .string(cell.outcome.rawValue),
        ]
        if let intentSequence {
            members["intent_seq"] = .int(Int64(intentSequence))
            members["old_value"] = cell.old?.text.map(JSONValue.string) ?? .null
            members["new_value"] = cell.new?.text.map(JSONValue.string) ?? .null
        }
        return .object(members)
    }
}
