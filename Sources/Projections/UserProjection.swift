import Basics
import Foundation
import LMDB
import Ledger
import LogEngine
import Relays
import Synchronization

/// The user and window projections, folded into the ledger's own environment in the same
/// transaction as the events (register it when opening the ledger).
///
/// The projections live in one of two generations of databases (even and odd); the root
/// `projection_state` names the one in use, and every transaction reads it first, so a
/// rebuild in any process (``rebuild(_:)``) switches every reader and writer at once.
public final class UserProjection: LedgerFolder {
    /// The root state database and both generations' databases, opened once at attach so no
    /// handle is opened or closed while transactions run.
    private struct Handles: Sendable {
        let root: Database
        let even: ProjectionDatabases
        let odd: ProjectionDatabases

        func generation(_ n: UInt64) -> ProjectionDatabases {
            var databases = n % 2 == 0 ? even : odd
            databases.generation = n
            return databases
        }
    }

    private let attached = Mutex<Handles?>(nil)
    /// Where a bulk load at open folds the log (nil: a temporary directory).
    private let scratch: String?
    /// The memory a fold of the whole log may take (``SortedFold``).
    private let foldMemory: Int
    /// The memory a fold of the whole log may take, by default: 3 GB, its sorted runs' 128 MB
    /// and a working state of about 300 bytes a user (about 9.5 million users) before it spills
    /// to the scratch directory.
    public static let defaultFoldMemory = 3 << 30

    /// Projections whose bulk load at open (``loadLog(from:schema:)``) folds the log in
    /// `scratch`: a new directory, removed after (nil: one in the temporary directory), in
    /// `foldMemory` bytes (``SortedFold``).
    public init(scratch: String? = nil, foldMemory: Int = UserProjection.defaultFoldMemory) {
        self.scratch = scratch
        self.foldMemory = foldMemory
    }

    private var handles: Handles {
        guard let handles = attached.withLock({ $0 }) else { preconditionFailure("UserProjection used before the ledger attached it") }
        return handles
    }

    /// The databases of the generation in use, as `transaction` sees it.
    func databases(in transaction: ReadTransaction) throws -> ProjectionDatabases {
        let handles = self.handles
        return handles.generation(try ProjectionGenerations.current(in: transaction, root: handles.root))
    }

    /// Opens the projection databases. A writable open of a ledger whose projections have an
    /// older layout drops them and starts the current layout empty at checkpoint 0, in one transaction;
    /// the ledger then loads the log into it (``loadLog(from:schema:)``) or, for a short
    /// log, folds it (and again after a crash: a load starts again, a fold continues).
    /// A read-only open of such a ledger throws ``LedgerError/Code/needsUpgrade``.
    public func attach(to environment: Environment) throws {
        let handles: Handles
        if environment.isReadOnly {
            let needsUpgrade = LedgerError(.needsUpgrade, "its projections have an older layout")
            handles = try environment.read { txn in
                do {
                    let handles = Handles(
                        root: try txn.openDatabase(ProjectionDatabases.rootName, create: false),
                        even: try .open(generation: 0, in: txn, create: false), odd: try .open(generation: 1, in: txn, create: false))
                    guard try txn.get(handles.root, key: ProjectionDatabases.layoutKey) == [ProjectionDatabases.layout] else { throw needsUpgrade }
                    return handles
                } catch let error as LMDBError where error.code == .notFound {
                    throw needsUpgrade
                }
            }
        } else {
            handles = try environment.write { txn in
                let handles = Handles(
                    root: try txn.openDatabase(ProjectionDatabases.rootName, create: true),
                    even: try .open(generation: 0, in: txn, create: true), odd: try .open(generation: 1, in: txn, create: true))
                if try txn.get(handles.root, key: ProjectionDatabases.layoutKey) != [ProjectionDatabases.layout] {
                    for name in ProjectionDatabases.layout1Names {
                        do { try txn.drop(try txn.openDatabase(name, create: false)) } catch let error as LMDBError where error.code == .notFound {}
                    }
                    for dbs in [handles.even, handles.odd] { try ProjectionGenerations.empty(dbs, in: txn) }
                    for key in [ProjectionDatabases.generationKey, ProjectionDatabases.rebuildingKey, ProjectionDatabases.loaderKey] {
                        try txn.delete(handles.root, key: key)
                    }
                    try txn.put(handles.root, key: ProjectionDatabases.layoutKey, value: [ProjectionDatabases.layout])
                }
                return handles
            }
        }
        attached.withLock { $0 = handles }
    }

    public func checkpoint(in transaction: ReadTransaction) throws -> UInt64 {
        try LMDBProjectionReader(transaction: transaction, databases: databases(in: transaction)).checkpoint()
    }

    public func fold(_ events: [RecordedEvent], in transaction: WriteTransaction) throws {
        try fold(events, into: databases(in: transaction), in: transaction)
    }

    private func fold(_ events: [RecordedEvent], into databases: ProjectionDatabases, in transaction: WriteTransaction) throws {
        try LMDBProjectionStore(databases: databases, in: transaction).fold(events)
    }

    /// Lends the projections to `body`: as committed now, or with `asOf` as they stood after
    /// the last event recorded at or before that time (read from the stored versions).
    public func read<T>(_ ledger: Ledger, asOf time: Timestamp? = nil, _ body: (any ProjectionSnapshot, LogView) throws -> T) throws -> T {
        try ledger.read { view in
            let asOf = try time.map { try view.lastSequence(recordedAtOrBefore: $0) }
            return try body(LMDBProjectionReader(transaction: view.transaction, databases: databases(in: view.transaction), asOf: asOf), view)
        }
    }

    /// ``read(_:asOf:_:)`` from async code: the read transaction is opened on a thread outside
    /// the pool async tasks run on (``Ledger/readInBackground(_:)``).
    public func readInBackground<T: Sendable>(
        _ ledger: Ledger, asOf time: Timestamp? = nil,
        _ body: @escaping @Sendable (any ProjectionSnapshot, LogView) throws -> T
    ) async throws -> T {
        try await OffPool.run { try self.read(ledger, asOf: time, body) }
    }

    /// Folds the whole log again into the generation not in use, then switches to it in the
    /// transaction that folds the last events.
    ///
    /// A generation nothing has been folded into is loaded whole: the log is folded with its
    /// output sorted, in `scratch` (a new directory, removed afterwards; by default one in the
    /// temporary directory), and the sorted entries are appended to the generation in key
    /// order, `chunk` × 8 per ledger transaction (``SortedFold``, ``GenerationLoad``). The events
    /// appended meanwhile are then folded `chunk` per transaction, as an interrupted fold's
    /// remainder is.
    ///
    /// Readers and writers (in any process) keep using the current projections until the
    /// switch, and no transaction grows with the log. A rebuild interrupted while loading
    /// starts its load again when run again, and one interrupted after continues where it
    /// stopped; a rebuild begun meanwhile by another process makes this one throw
    /// ``LedgerError/Code/takenOver``. `progress` hears after each transaction, and may throw
    /// to stop. Returns the number of events folded.
    @discardableResult
    public func rebuild(
        _ ledger: Ledger, chunk: UInt64 = Ledger.eventsPerBackgroundTransaction, scratch: String? = nil,
        progress: ((_ folded: UInt64, _ head: UInt64) throws -> Void)? = nil
    ) throws -> UInt64 {
        try rebuild(
            ledger.environment, schema: ledger.schema, chunk: chunk, scratch: scratch ?? ScratchDirectory.temporaryPath(for: "rebuild"),
            onlyIfEmpty: false, progress: progress) ?? 0
    }

    /// The projections in use have folded nothing beside a long log (a ledger from before
    /// layout 2, or after a layout change): they are loaded by a rebuild, into the other
    /// generation in key order, then switched to; until then the generation in use stays as it
    /// was. Nil when they were no longer empty by the rebuild's first transaction. A load killed
    /// part-way starts again at the next writable open.
    public func loadLog(from environment: Environment, schema: LedgerSchema) throws -> UInt64? {
        try rebuild(
            environment, schema: schema, chunk: Ledger.eventsPerBackgroundTransaction,
            scratch: scratch ?? ScratchDirectory.temporaryPath(for: "upgrade"), onlyIfEmpty: true, progress: nil)
    }

    /// ``rebuild(_:chunk:scratch:progress:)``, or nil without writing anything when
    /// `onlyIfEmpty` and the projections in use have folded something.
    private func rebuild(
        _ environment: Environment, schema: LedgerSchema, chunk: UInt64, scratch: String, onlyIfEmpty: Bool,
        progress: ((_ folded: UInt64, _ head: UInt64) throws -> Void)?
    ) throws -> UInt64? {
        let handles = self.handles
        // The scratch directory is made only for a load, and before the ledger is written, so
        // a scratch directory that cannot be made leaves it untouched; continuing an interrupted
        // rebuild's fold needs none.
        var sortedFold: SortedFold?
        defer { sortedFold?.remove() }
        /// Whether the rebuild would load (nil: asked to load only empty projections, and they are not).
        func loads(in txn: ReadTransaction) throws -> Bool? {
            if onlyIfEmpty, try LMDBProjectionReader(transaction: txn, databases: databases(in: txn)).checkpoint() != 0 { return nil }
            return try ProjectionGenerations.rebuildLoads(in: txn, root: handles.root, generations: handles.generation)
        }
        var start = RebuildStart.needsScratch
        while case .needsScratch = start {
            if try environment.read({ try loads(in: $0) }) == true, sortedFold == nil {
                sortedFold = try SortedFold(directory: scratch, for: environment, schema: schema, memory: foldMemory)
            }
            start = try environment.write { txn in
                guard let loads = try loads(in: txn) else { return .notEmpty }
                // Another process changed that since the read: make the scratch, then begin again.
                if loads, sortedFold == nil { return .needsScratch }
                let target = try ProjectionGenerations.beginRebuild(in: txn, root: handles.root, generations: handles.generation)
                return .begun(target, load: loads ? try ProjectionGenerations.beginLoad(target, in: txn, root: handles.root) : nil)
            }
        }
        guard case .begun(let target, let load) = start else { return nil }
        if let token = load {
            guard let fold = sortedFold else { preconditionFailure("a load begun without its scratch directory") }
            try self.load(target, token: token, from: environment, schema: schema, chunk: chunk, fold: fold, progress: progress)
            // The working map and the runs go now, not after the tail is folded.
            fold.remove()
            sortedFold = nil
        }
        while true {
            let (folded, head, done) = try environment.write { txn in
                // Another process may have finished this rebuild: then there is nothing left to do.
                guard try ProjectionGenerations.isRebuilding(target, in: txn, root: handles.root) else {
                    let checkpoint = try LMDBProjectionReader(transaction: txn, databases: databases(in: txn)).checkpoint()
                    return (checkpoint, checkpoint, true)
                }
                let view = LogView(txn, schema: schema)
                let head = try view.head().sequence
                let checkpoint = try LMDBProjectionReader(transaction: txn, databases: target).checkpoint()
                guard checkpoint <= head else {
                    throw LedgerError(.malformedRecord, "the projections being rebuilt end at event \(checkpoint), after the log's last, \(head)")
                }
                let last = head - checkpoint > chunk ? checkpoint + chunk : head
                if last > checkpoint {
                    try fold(try view.events((checkpoint + 1)...last), into: target, in: txn)
                }
                guard last == head else { return (last, head, false) }
                try ProjectionGenerations.switchTo(target, in: txn, root: handles.root, generations: handles.generation)
                return (last, head, true)
            }
            try progress?(folded, head)
            if done { return folded }
        }
    }

    /// How a rebuild's first transaction found the projections.
    private enum RebuildStart {
        /// Asked to load only empty projections, it found them folded: nothing was written.
        case notEmpty
        /// A load is due and no scratch directory is made yet: nothing was written.
        case needsScratch
        /// Rebuilding into `target`; loading it first under the token `load`, or continuing an
        /// interrupted rebuild's fold when nil.
        case begun(ProjectionDatabases, load: [UInt8]?)
    }

    /// Loads the empty generation `target` with the log through its present head, folded in
    /// `fold` and appended in key order (``GenerationLoad``). A load taken over by another
    /// process stops at the next folded chunk or copying transaction.
    private func load(
        _ target: ProjectionDatabases, token: [UInt8], from environment: Environment, schema: LedgerSchema, chunk: UInt64,
        fold: SortedFold, progress: ((_ folded: UInt64, _ head: UInt64) throws -> Void)?
    ) throws {
        let root = handles.root
        let head = try environment.read { try LogView($0, schema: schema).head().sequence }
        try fold.fold(
            through: head, events: { range in try environment.read { try LogView($0, schema: schema).events(range) } },
            progress: { folded in
                try environment.read { try ProjectionGenerations.checkLoading(target, token: token, in: $0, root: root) }
                try progress?(folded, head)
            })
        let copy = GenerationLoad(
            environment: environment, root: handles.root, target: target, token: token,
            entriesPerTransaction: Int(chunk) * 8)
        try copy.run(from: fold) { try progress?(head, head) }
    }
}
