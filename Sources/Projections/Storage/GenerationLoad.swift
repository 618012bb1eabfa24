import LMDB
import Ledger

/// Loads an empty projection generation from a scratch fold of the log, database by database
/// in key order, appending (`MDB_APPEND`): every page is written once, full, instead of the
/// random pages an event-by-event fold dirties again in every transaction.
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

    /// Copies `scratch`, folded through `head`, into the target; `progress` hears after each
    /// transaction, and may throw to stop.
    func run(from scratch: ScratchFold, head: UInt64, progress: (() throws -> Void)?) throws {
        try scratch.read { source, folded in
            for (from, to) in zip(folded.data, target.data) {
                try source.withCursor(from) { cursor in
                    var next = try cursor.first().map { Array($0.key) }
                    while let start = next {
                        // The write may run again (the map grown), so it seeks its start each time.
                        next = try environment.write { txn in
                            try checkStillLoading(in: txn)
                            var entry = try cursor.seek(atLeast: start)
                            var copied = 0
                            while let (key, value) = entry, copied < entriesPerTransaction {
                                try txn.put(to, key: key, value: value, flags: .append)
                                copied += 1
                                entry = try cursor.next()
                            }
                            return entry.map { Array($0.key) }
                        }
                        try progress?()
                    }
                }
            }
            let nextUserKey = try source.get(folded.state, key: ProjectionDatabases.nextUserKey).map(Array.init)
            try environment.write { txn in
                try checkStillLoading(in: txn)
                if let nextUserKey { try txn.put(target.state, key: ProjectionDatabases.nextUserKey, value: nextUserKey) }
                try txn.put(target.state, key: ProjectionDatabases.checkpointKey, value: BigEndian.bytes(head))
                try txn.delete(root, key: ProjectionDatabases.loaderKey)
            }
        }
    }

    private func checkStillLoading(in txn: WriteTransaction) throws {
        try ProjectionGenerations.checkLoading(target, token: token, in: txn, root: root)
    }
}
