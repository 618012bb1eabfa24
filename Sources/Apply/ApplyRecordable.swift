import Basics
import Ledger

extension ApplyBatchWriter {
    /// A batch's entries as the ledger records them, made while the batch before is written:
    /// each cell's values, an address sealed with the user's data key (the new one as the
    /// ledger holds it already; an address of the user's own, kept, recorded without it).
    struct Recordable: Sendable {
        /// The entries to write: those with a cell left.
        var entries: [ApplyPlan.Entry] = []
        /// Their rows, one per entry, as the batch's intent records them.
        var rows: [ApplyIntended.Row] = []

        /// `entries` as recorded. An email cell whose key is gone (the user erased since the
        /// plan) is neither recorded nor written. `keys` are the data keys of the entries' users
        /// when the page read them (nil: read here).
        init(_ entries: [ApplyPlan.Entry], keys given: Sealer.KeyBatch?, sealer: Sealer) throws {
            let keys = try given ?? sealer.keys(ids: entries.compactMap { entry in entry.cell(.email) == nil ? nil : entry.keyID })
            var random = SecureRandom()
            for var entry in entries {
                var cells: [ApplyCell] = []
                entry.cells = try entry.cells.filter { cell in
                    func recorded(_ value: String?, sealed: SealedValue?) throws -> ApplyValue?? {
                        guard let value, cell.column.isSealed else { return .some(value.map(ApplyValue.text)) }
                        if let sealed { return .some(.sealed(sealed)) }
                        return try entry.keyID.flatMap { try sealer.seal(value, keyID: $0, with: keys, random: &random) }.map { .some(.sealed($0)) }
                    }
                    guard cell.planned != .kept else {
                        cells.append(ApplyCell(column: cell.column, old: nil, new: nil, planned: .kept))
                        return true
                    }
                    guard let old = try recorded(cell.old, sealed: nil), let new = try recorded(cell.new, sealed: cell.sealed) else { return false }
                    cells.append(ApplyCell(column: cell.column, old: old, new: new, planned: cell.planned, holders: cell.holders))
                    return true
                }
                guard !cells.isEmpty else { continue }
                self.entries.append(entry)
                rows.append(ApplyIntended.Row(account: entry.accountID, cells: cells))
            }
        }
    }
}
