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

    public func attach(to environment: Environment) throws {
        let dbs: [Database]
        if environment.isReadOnly {
            dbs = try environment.read { txn in try ProjectionDatabases.names.map { try txn.openDatabase($0, create: false) } }
        } else {
            dbs = try environment.write { txn in try ProjectionDatabases.names.map { try txn.openDatabase($0, create: true) } }
        }
        attached.withLock { $0 = ProjectionDatabases(dbs) }
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

    /// Lends the stored projections, as committed now, to `body`.
    public func read<T>(_ ledger: Ledger, _ body: (any ProjectionSnapshot, LogView) throws -> T) throws -> T {
        try ledger.read { view in try body(LMDBProjectionReader(transaction: view.transaction, databases: databases), view) }
    }

    /// Empties the projections and folds the whole log again, in one write transaction,
    /// so readers see either the old projections or the complete new ones.
    @discardableResult
    public func rebuild(_ ledger: Ledger) throws -> UInt64 {
        let dbs = databases
        return try ledger.environment.write { txn in
            try txn.clear(dbs.users)
            try txn.clear(dbs.userIDs)
            try txn.clear(dbs.meta)
            let view = LogView(txn, schema: ledger.schema)
            let head = try view.head().sequence
            let store = LMDBProjectionStore(transaction: txn, databases: dbs)
            let fold = UserFold(store: store)
            try view.forEachEvent(from: 1, through: head) { try fold.fold($0) }
            try store.finish()
            return head
        }
    }

    /// Folds the events recorded up to `time` into memory: the projections as they stood then.
    public static func asOf(_ time: Timestamp, in ledger: Ledger) throws -> MemoryProjection {
        let memory = MemoryProjection()
        let last = try ledger.read { try $0.lastSequence(recordedAtOrBefore: time) }
        var next: UInt64 = 1
        while next <= last {
            let chunkEnd = min(last, next + 49_999)
            try ledger.read { view in try view.forEachEvent(from: next, through: chunkEnd) { try memory.fold($0) } }
            next = chunkEnd + 1
        }
        return memory
    }
}
