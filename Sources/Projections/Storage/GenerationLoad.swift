import LMDB
import Ledger

/// Loads an empty projection generation from a sorted fold of the log (``SortedFold``),
/// database by database in key order, appending (`MDB_APPEND`): every page is written once,
/// full, instead of the random pages an event-by-event fold dirties again in every transaction.
///
/// The ledger's write transactions each copy a bounded number of entries and first check that
/// this load is still the one under way; the last one writes the checkpoint and the user-key
/// counter, so until then the generation holds no checkpoint and a rebuild run again (after a
/// crash) empties it and loads it afresh.
struct GenerationLoad {
    let environment: Environment
    let root: Database
    let target: ProjectionDatabases
    /// Names this load (``ProjectionGenerations/beginLoad(_:in:root:)``).
    let token: [UInt8]
    /// Entries copied per ledger transaction.
    let entriesPerTransaction: Int

    /// Copies what `fold` folded into the target; `progress` hears after each transaction, and
    /// may throw to stop.
    func run(from fold: SortedFold, progress: (() throws -> Void)?) throws {
        try fold.withEntries { entries in
            // One transaction's entries, gathered before it as run records (the transaction
            // runs again when the map grows): one buffer, not two arrays per entry.
            var batch: [UInt8] = []
            while true {
                batch.removeAll(keepingCapacity: true)
                var count = 0
                while count < entriesPerTransaction, let (table, key, value) = try entries.next() {
                    RunRecord.append(table: table, key: key, value: value, to: &batch)
                    count += 1
                }
                guard count > 0 else { break }
                try environment.write { txn in
                    try checkStillLoading(in: txn)
                    try batch.withUnsafeBytes { all in
                        var offset = 0
                        while let record = RunRecord.read(UnsafeRawBufferPointer(rebasing: all[offset...])) {
                            let table = try ProjectionTable(record.sortKey[0])
                            let key = UnsafeRawBufferPointer(rebasing: record.sortKey[1...])
                            try txn.put(target.database(table), key: key, value: record.value, flags: .append)
                            offset += record.length
                        }
                    }
                }
                try progress?()
            }
        }
        try environment.write { txn in
            try checkStillLoading(in: txn)
            for (key, value) in fold.stateEntries { try txn.put(target.state, key: key, value: value) }
            try txn.delete(root, key: ProjectionDatabases.loaderKey)
        }
    }

    private func checkStillLoading(in txn: WriteTransaction) throws {
        try ProjectionGenerations.checkLoading(target, token: token, in: txn, root: root)
    }
}
