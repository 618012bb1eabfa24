import LMDB

/// Gives a ledger written before audit evidence existed its Merkle tree, once, at open.
enum MerkleTreeBuilder {
    /// Opens the `merkle` and `checkpoints` databases, creating them and building the tree
    /// from the log when the ledger predates them.
    static func openAuditDatabases(in environment: Environment, log: Database, meta: Database) throws -> [Database] {
        do {
            return try environment.read { txn in
                try LedgerSchema.auditNames.map { try txn.openDatabase($0, flags: [], create: false) }
            }
        } catch let error as LMDBError where error.code == .notFound {
            return try environment.write { txn in
                let databases = try LedgerSchema.auditNames.map { try txn.openDatabase($0, flags: [], create: true) }
                var tree = MerkleFrontier()
                try txn.withCursor(log) { cursor in
                    var entry = try cursor.first()
                    while let (_, value) = entry {
                        try tree.append(storedRecord: value, writingNodesTo: databases[0], in: txn)
                        entry = try cursor.next()
                    }
                }
                try txn.put(meta, key: LedgerSchema.merkleKey, value: tree.encoded)
                return databases
            }
        }
    }
}
