import Ledger

/// One row a ledger keeps beside an event (a handoff package's row, an apply batch's account).
public struct KeptRow: Equatable, Sendable {
    /// The type of the event keeping it.
    public var type: String
    public var sequence: UInt64
    public var index: Int
    public var line: String

    /// The row as an export's `event_rows` carries it: seq, row_index, line.
    public var cells: [String] { [String(sequence), String(index), line] }

    /// Each row the ledger at `path` keeps, by event and index, read through each event's own
    /// count of its rows (not by walking the `rows` database as an export does); `opened`, an
    /// apply batch's addresses opened with the ledger's keys, as an export with personal data
    /// holds them.
    public static func all(inLedgerAt path: String, opened: Bool = false) throws -> [KeptRow] {
        let ledger = try Ledger.open(at: path, options: .init(access: .readOnly))
        defer { ledger.close() }
        let sealer = ledger.sealer
        return try ledger.read { view in
            var rows: [KeptRow] = []
            try view.forEachEvent(from: 1, through: try view.head().sequence) { event in
                let count = event.body.keptRowCount
                guard count > 0 else { return }
                for (index, stored) in try view.storedRows(of: event.sequence, count: count).enumerated() {
                    let line = opened && event.type == .applyIntended ? try SealedJSON.opened(stored, with: sealer) : stored
                    rows.append(
                        KeptRow(type: event.type.rawValue, sequence: event.sequence, index: index, line: String(decoding: line, as: UTF8.self)))
                }
            }
            return rows
        }
    }
}
