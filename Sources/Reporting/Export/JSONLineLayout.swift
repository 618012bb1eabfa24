import Ledger

/// Writes rows of cells as canonical JSON objects keyed by column, with the keys sorted once
/// for the columns rather than for every row.
struct JSONLineLayout: Sendable {
    /// The columns in canonical key order (by their UTF-8 bytes), each with its index in a row
    /// and its key as written (`"name":`).
    private let keyOrder: [(column: String, index: Int, key: [UInt8])]

    init(columns: [String]) {
        keyOrder = columns.enumerated()
            .sorted { $0.element.utf8.lexicographicallyPrecedes($1.element.utf8) }
            .map { index, column in
                var w = JSONWriter(capacity: column.utf8.count + 3)
                w.dynamicKey(column)
                return (column, index, w.bytes)
            }
    }

    /// One object of `cells` (in the columns' order); the column named `verbatim`, if any,
    /// holds `json`, written as it is.
    func object(_ cells: [ExportCell], verbatim: String? = nil, json: [UInt8] = []) -> [UInt8] {
        var w = JSONWriter(capacity: json.count + 512)
        w.beginObject()
        for (column, index, key) in keyOrder {
            w.raw(key)
            if column == verbatim { w.raw(json) } else { cells[index].write(to: &w) }
        }
        w.endObject()
        return w.bytes
    }
}
