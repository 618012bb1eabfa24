import LMDB
import Ledger
import Synchronization

/// The user and window projections, folded into the ledger's own environment in the same
/// transaction as the events (register it when opening the ledger).
public final class UserProjection: LedgerFolder {
    private let attached = Mutex<ProjectionDatabases?>(nil)

    public init() {}

    private var databases: ProjectionDatabases {
        guard let dbs = attached.withLock({ $0 }) else { preconditionFailure("UserProjection used before the ledger attached it") }
        return dbs
    }

    /// Opens the projection databases. A writable open of a ledger whose projections have an
    /// older layout drops them and starts layout 2 empty at checkpoint 0, in one transaction;
    /// the ledger then folds the log into it (and again after a crash, from where it stopped).
    public func attach(to environment: Environment) throws {
        let dbs: ProjectionDatabases
        if environment.isReadOnly {
            let needsUpgrade = LedgerError(.notALedger, "the ledger's projections need an upgrade: open it once without read-only access")
            dbs = try environment.read { txn in
                let dbs: ProjectionDatabases
                do { dbs = ProjectionDatabases(try ProjectionDatabases.names.map { try txn.openDatabase($0, create: false) }) } catch let error as LMDBError where error.code == .notFound {
                    throw needsUpgrade
                }
                guard try txn.get(dbs.state, key: ProjectionDatabases.layoutKey) == [ProjectionDatabases.layout] else { throw needsUpgrade }
                return dbs
            }
        } else {
            dbs = try environment.write { txn in
                let dbs = ProjectionDatabases(try ProjectionDatabases.names.map { try txn.openDatabase($0, create: true) })
                if try txn.get(dbs.state, key: ProjectionDatabases.layoutKey) != [ProjectionDatabases.layout] {
                    for name in ProjectionDatabases.layout1Names {
                        do { try txn.drop(try txn.openDatabase(name, create: false)) } catch let error as LMDBError where error.code == .notFound {}
                    }
                    for db in [dbs.userVersions, dbs.userLinks, dbs.migratedOrder, dbs.windows, dbs.state] { try txn.clear(db) }
                    try txn.put(dbs.state, key: ProjectionDatabases.layoutKey, value: [ProjectionDatabases.layout])
                }
                return dbs
            }
        }
        attached.withLock { $0 = dbs }
    }

    public func checkpoint(in transaction: ReadTransaction) throws -> UInt64 {
        try LMDBProjectionReader(transaction: transaction, databases: databases).checkpoint()
    }

    public func fold(_ events: [RecordedEvent], in transaction: WriteTransaction) throws {
        let store = LMDBProjectionStore(transaction: transaction, databases: databases)
        let fold = UserFold(store: store)
        for event in events { try fold.fold(event) }
        try store.finish()
    }

    /// Lends the projections to `body`: as committed now, or with `asOf` as they stood after
    /// the last event recorded at or before that time (read from the stored versions).
    public func read<T>(_ ledger: Ledger, asOf time: Timestamp? = nil, _ body: (any ProjectionSnapshot, LogView) throws -> T) throws -> T {
        try ledger.read { view in
            let asOf = try time.map { try view.lastSequence(recordedAtOrBefore: $0) }
            return try body(LMDBProjectionReader(transaction: view.transaction, databases: databases, asOf: asOf), view)
        }
    }

    /// Empties the projections and folds the whole log again, in one write transaction,
    /// so readers see either the old projections or the complete new ones.
    @discardableResult
    public func rebuild(_ ledger: Ledger) throws -> UInt64 {
        let dbs = databases
        return try ledger.environment.write { txn in
            for db in [dbs.userVersions, dbs.userLinks, dbs.migratedOrder, dbs.windows] { try txn.clear(db) }
            for key in [ProjectionDatabases.checkpointKey, ProjectionDatabases.nextUserKey] { try txn.delete(dbs.state, key: key) }
            let view = LogView(txn, schema: ledger.schema)
            let head = try view.head().sequence
            let store = LMDBProjectionStore(transaction: txn, databases: dbs)
            let fold = UserFold(store: store)
            try view.forEachEvent(from: 1, through: head) { try fold.fold($0) }
            try store.finish()
            return head
        }
    }
}
