import LMDB
import Ledger

/// The user projection's fold worked out beside the commit before it (``SpeculativeFold``): one
/// ``LMDBProjectionStore`` kept from batch to batch, so each batch reads the users the
/// batches before it changed, committed or not.
final class UserSpeculativeFold: SpeculativeFold {
    private let projection: UserProjection
    private var store: LMDBProjectionStore?

    init(projection: UserProjection) {
        self.projection = projection
    }

    func fold(
        _ events: [RecordedEvent], after base: UInt64, reading transaction: ReadTransaction, into writes: inout WriteBatch
    ) throws
        -> (@Sendable (ReadTransaction) throws -> Bool)?
    {
        let databases = try projection.databases(in: transaction)
        if let store {
            // Rebuilt meanwhile into the other generation: what this fold holds is of the old one.
            guard store.databases.generation == databases.generation, store.folded == base else { return nil }
        } else {
            guard try Self.hasFolded(through: base, databases, in: transaction) else { return nil }
        }
        let store = self.store ?? LMDBProjectionStore(databases: databases)
        self.store = store
        writes.append(try store.fold(events, reading: transaction))
        let projection = self.projection
        let generation = databases.generation
        return { transaction in
            let databases = try projection.databases(in: transaction)
            return try databases.generation == generation && Self.hasFolded(through: base, databases, in: transaction)
        }
    }

    /// Whether the projections in `databases`, as `transaction` reads them, end at event `base`.
    private static func hasFolded(through base: UInt64, _ databases: ProjectionDatabases, in transaction: ReadTransaction) throws -> Bool {
        try LMDBProjectionReader(transaction: transaction, databases: databases).checkpoint() == base
    }

    func forget(through sequence: UInt64) {
        store?.forget(through: sequence)
    }
}
