import Basics
import Ledger
import Projections

/// Writes rows of cells as canonical JSON objects keyed by column, with the keys sorted once
/// for the columns rather than for every row. One column may hold JSON written as it is.
struct JSONLineLayout: Sendable {
    /// The columns in canonical key order (by their UTF-8 bytes), each with its index in a row
    /// and its key as written (`"name":`).
    private let keyOrder: [(index: Int, key: [UInt8])]
    /// The index of the column whose value is given as JSON bytes, if any.
    private let verbatim: Int?

    init(columns: [String], verbatim: String? = nil) {
        self.verbatim = verbatim.flatMap { columns.firstIndex(of: $0) }
        keyOrder = columns.enumerated()
            .sorted { $0.element.utf8.lexicographicallyPrecedes($1.element.utf8) }
            .map { index, column in
                var w = JSONWriter(capacity: column.utf8.count + 3)
                w.dynamicKey(column)
                return (index, w.bytes)
            }
    }

    /// One object of `cells` (in the columns' order); the verbatim column, if any, holds
    /// `json`, written as it is (its cell is not read).
    func object(_ cells: [QueryTable.Cell], json: [UInt8] = []) -> [UInt8] {
        var w = JSONWriter(capacity: json.count + 512)
        w.beginObject()
        for (index, key) in keyOrder {
            w.raw(key)
            if index == verbatim { w.raw(json) } else { w.cell(cells[index]) }
        }
        w.endObject()
        return w.bytes
    }
}

extension JSONWriter {
    /// Writes a cell as JSON: times as RFC 3339 text, null as null.
    mutating func cell(_ cell: QueryTable.Cell) {
        switch cell {
        case .text(let v): string(v)
        case .int(let v): int(Int64(v))
        case .bool(let v): bool(v)
        case .time(let t): string(t.rfc3339)
        case .events(let table): raw(table.json.canonicalBytes)
        case .null: raw(Array("null".utf8))
        }
    }
}
