import Ledger
import Projections

/// One row an event keeps beside it in the ledger's `rows` database, as exports carry it: a
/// handoff package's row (a line of its `rows.csv`) in a "handoff rows received" event, or one
/// account's line of an apply batch. The event's JSON holds only the rows' count and Merkle
/// root; these are the rows themselves, as kept (CSV writes them inert, as every cell).
public struct ExportedRow: Sendable {
    /// The event that keeps the row.
    public var sequence: UInt64
    /// The row's index among the event's rows, from 0: the ledger's key is (`sequence`, `index`).
    public var index: Int
    /// The row's bytes as kept.
    public var line: [UInt8]

    public typealias Column = AnswerColumn<ExportedRow>

    /// The columns, in the order every format writes them (``ExportAnswers/eventRows``).
    static let columns: [Column] = [
        SharedColumns.sequence { $0.sequence },
        Column("row_index", .integer, optional: false, "The row's place among its event's rows, from 0.") { .int($0.index) },
        Column(
            "line", .text, optional: false,
            "The row as the ledger keeps it: a line of the handoff package's `rows.csv` (without its line end); for an apply batch, one account's JSON line (its cells: the `sub`'s values at the top, `email` and `email_forwarding` as objects; the addresses sealed, or opened with --include-personal-data and null once the user is erased), or a collision's line of the accounts holding its new value (`row`, `holders`). Exact in JSON lines, SQLite and PostgreSQL; CSV writes it inert, as every cell."
        ) {
            .text(String(decoding: $0.line, as: UTF8.self))
        },
    ]
}
