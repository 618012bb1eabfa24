import LMDB

/// Gives a ledger written before audit evidence existed its Merkle tree, once, at open.
package enum MerkleTreeBuilder {
    /// Creates the `merkle` and `checkpoints` databases and builds the tree from the log when
    /// the ledger predates them (no tree edge in `meta` although the log has events). Returns
    /// the number of leaves when it built the tree, nil when the tree was there.
    package static func buildIfMissing(in environment: Environment) throws -> UInt64? {
        let present = try environment.read { txn -> Bool in
            do {
                for name in LedgerSchema.auditNames { _ = try txn.openDatabase(name, create: false) }
            } catch let error as LMDBError where error.code == .notFound {
                return false
            }
            let meta = try txn.openDatabase("meta", create: false)
            let hasEdge = try txn.get(meta, key: LedgerSchema.merkleKey) != nil
            let isEmpty = try txn.get(meta, key: LedgerSchema.headKey) == nil
            return hasEdge || isEmpty
        }
        guard !present else { return nil }
        return try environment.write { txn in
            let schema = try LedgerSchema.open(in: txn, create: true)
            try txn.clear(schema.merkle)
            var tree = MerkleFrontier()
            try txn.withCursor(schema.log) { cursor in
                var entry = try cursor.first()
                while let (key, value) = entry {
                    // A record no longer than its chain hash (an altered copy) has no leaf.
                    _ = try LogView.eventJSON(ofStoredRecord: value, sequence: try BigEndian.uint64(key))
                    try tree.append(storedRecord: value, writingNodesTo: schema.merkle, in: txn)
                    entry = try cursor.next()
                }
            }
            try txn.put(schema.meta, key: LedgerSchema.merkleKey, value: tree.encoded)
            return tree.size
        }
    }
}
