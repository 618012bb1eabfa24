import Basics
import Foundation
import LMDB
import LogEngine
import Logging
import Relays

/// One team's append-only, hash-chained event log in an LMDB environment.
///
/// Appends from any number of tasks are group-committed by one writer thread
/// (``GroupCommitWriter``): every submission waiting is appended and folded into the folders
/// (projections) registered at open in one write transaction (``GroupCommit``), committed
/// with one fsync; an append returns only once its event is on disk.
public final class Ledger: Sendable {
    /// Whether an open may write.
    public enum Access: Sendable {
        /// Reads only: no writer, no lock, no upgrade, no file created or changed (except a
        /// reader slot in a `lock.mdb` this user may write: ``ReaderLocks``). Works on files the
        /// user cannot write and on a read-only mount. An older ledger is read as it is: it
        /// verifies and proves, and answers that need the newer layout say to run
        /// `handover upgrade`.
        case readOnly
        /// Appends, and brings an older format or layout up to date first (``upgrades``).
        case readWrite
    }

    /// Options for opening a ledger.
    public struct Options: Sendable {
        /// Initial map size of the log environment (it grows by itself).
        public var mapSize: Int = 64 << 20
        /// Most events one group commit writes.
        public var maximumBatch: Int = 4096
        /// Who the events are recorded by.
        public var actor: Actor = .currentProcess()
        public var logger = Logger(label: "handover.ledger")
        /// Read-only or read-write (the default).
        public var access: Access = .readWrite
        /// A folder that has folded nothing, opened beside a log longer than this, is loaded in
        /// bulk (``LedgerFolder/loadLog(from:schema:)``) rather than event by event.
        public var bulkLoadBeyond: UInt64 = Ledger.eventsPerBackgroundTransaction
        /// The team whose ledger the work belongs on: the other team's is refused before the
        /// open changes anything (nil: either team's).
        public var role: RoleRequirement?
        /// Where the directory came from, said when it holds no ledger (a default, for one).
        public var pathNote: String?
        /// Other directories to suggest when the one given holds no ledger.
        public var alsoNear: [String] = []

        public init(access: Access = .readWrite) { self.access = access }
    }

    /// The ledger directory.
    public let directory: String
    /// The log environment.
    public let environment: Environment
    /// The log's named databases.
    public let schema: LedgerSchema
    /// Who this process records events as.
    public let actor: Actor
    /// Seals and opens personal data.
    public let sealer: Sealer
    /// What this open brought up to date, in order (empty when nothing was older, and always
    /// for a read-only open).
    public let upgrades: [String]
    private let folders: [any LedgerFolder]
    /// Nil when opened read-only.
    private let writer: GroupCommitWriter<PreparedEvent, AppendOutcome>?

    /// The log environment's file inside a ledger directory.
    public static func dataFile(in directory: String) -> String { directory + "/data.mdb" }
    /// The key store's directory inside a ledger directory.
    public static func keyStoreDirectory(in directory: String) -> String { directory + "/keys" }

    /// Attaches `folders`, then catches them up (read-write) or checks they are current
    /// (read-only), before the writer starts.
    private init(
        directory: String, environment: Environment, schema: LedgerSchema, sealer: Sealer, folders: [any LedgerFolder], options: Options,
        upgrades: [String]
    ) throws {
        var upgrades = upgrades
        do {
            for folder in folders { try folder.attach(to: environment) }
            if environment.isReadOnly {
                try Ledger.checkFoldersAreCurrent(folders, environment: environment, schema: schema)
            } else {
                let loaded = Ledger.load(folders, directory: directory, environment: environment, schema: schema, options: options)
                if loaded > 0 { upgrades.append("projections: loaded \(counted(loaded, "event")) in key order") }
                let folded = try Ledger.catchUp(folders, environment: environment, schema: schema)
                if folded > 0 { upgrades.append("projections: folded \(counted(folded, "event")) the log held beyond them") }
                if let indexed = try Ledger.buildPersonIndexIfMissing(environment: environment, schema: schema), indexed > 0 {
                    upgrades.append("person index: built over \(counted(indexed, "event")); the next `handover checkpoint` commits it")
                }
            }
        } catch let error as LedgerError where error.code == .needsUpgrade {
            throw LedgerError.needsUpgrade(directory, error.message)
        }
        self.directory = directory
        self.environment = environment
        self.schema = schema
        self.actor = options.actor
        self.folders = folders
        self.sealer = sealer
        self.upgrades = upgrades
        if environment.isReadOnly {
            self.writer = nil
        } else {
            self.writer = GroupCommitWriter(name: "handover-ledger-writer", maximumBatch: options.maximumBatch, logger: options.logger) {
                [actor = options.actor] events in
                try GroupCommit.write(events, environment: environment, schema: schema, actor: actor, folders: folders)
            }
        }
    }

    deinit { writer?.stop() }

    /// Creates a new ledger in `directory` (created if missing, refused if not empty) and
    /// records its "ledger created" event as sequence 1.
    public static func create(
        at directory: String, _ created: LedgerCreated, folders: [any LedgerFolder] = [], options: Options = Options()
    ) async throws -> Ledger {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw LedgerError(.ledgerExists, "\(directory) exists and is not a directory") }
            if fm.fileExists(atPath: dataFile(in: directory)) {
                throw LedgerError(.ledgerExists, "\(directory) already holds a ledger; refusing to overwrite it")
            }
            let contents = try fm.contentsOfDirectory(atPath: directory)
            guard contents.isEmpty else {
                throw LedgerError(
                    .ledgerExists,
                    "\(directory) is not empty (it holds \(counted(contents.count, "entry", "entries"))); choose a new or empty directory")
            }
        }
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try CheckpointKey.create(in: directory)
        let environment = try Environment(path: directory, options: Environment.Options(mapSize: options.mapSize))
        let schema = try environment.write { txn in
            let schema = try LedgerSchema.open(in: txn, create: true)
            try txn.put(schema.meta, key: LedgerSchema.formatKey, value: Array(LedgerSchema.formatMarker.utf8))
            return schema
        }
        let sealer = Sealer(keyStore: try KeyStore(directory: keyStoreDirectory(in: directory)))
        let ledger = try Ledger(
            directory: directory, environment: environment, schema: schema, sealer: sealer, folders: folders, options: options, upgrades: [])
        _ = try await ledger.append(EventDraft(.ledgerCreated(created), idempotencyKey: "ledger-created"))
        _ = try writeVerifierKeyIfMissing(in: directory, origin: try ledger.origin())
        return ledger
    }

    /// Opens the existing ledger in `directory`, with a clear error when there is none.
    ///
    /// Read-write, it first brings an older ledger up to date (the format-1 indexes, a missing
    /// Merkle tree, the key store's layout, the projections, the verifier key file), each step
    /// resumable, and lists what it did in ``upgrades``. Read-only, it reads the ledger as it is.
    public static func open(at directory: String, folders: [any LedgerFolder] = [], options: Options = Options()) throws -> Ledger {
        let fm = FileManager.default
        guard LedgerLocation.isLedger(directory) else {
            throw LedgerLocation(path: directory, alsoNear: options.alsoNear).refusal(note: options.pathNote)
        }
        let readOnly = options.access == .readOnly
        // A copy made without keys (it has a checkpoint key file, public or private, but no key
        // store) is refused before LMDB creates anything in it.
        let keyless =
            !fm.fileExists(atPath: keyStoreDirectory(in: directory))
            && [VerifierKeyFile.path(in: directory), CheckpointKey.path(in: directory)].contains(where: fm.fileExists(atPath:))
        guard readOnly || !keyless else {
            throw LedgerError(.readOnly, "\(directory) has no key store (keys/): it is a copy made without keys, to be read, not written")
        }
        let environment: Environment
        do {
            environment = try Environment(path: directory, options: Environment.Options(mapSize: options.mapSize, readOnly: readOnly))
        } catch let error as LMDBError where error.code == .busy {
            throw LedgerError(
                .readOnly, "\(directory) cannot be read safely by this user (read a copy, or run as a user who may write \(directory)/lock.mdb)",
                underlying: error)
        } catch let error as LMDBError where !readOnly && [EACCES, EROFS].contains(error.code.rawValue) {
            throw LedgerError(
                .readOnly,
                "\(directory) cannot be written by this user; the commands that only read (verify, query, report, export, prove, backup) work on it, this one writes",
                underlying: error)
        } catch let error as LMDBError {
            throw LedgerError(.notALedger, "\(directory) does not hold a readable LMDB environment", underlying: error)
        }
        let format: String?
        do {
            format = try environment.read { txn in
                let meta = try txn.openDatabase("meta", create: false)
                return try txn.get(meta, key: LedgerSchema.formatKey).map { String(decoding: $0, as: UTF8.self) }
            }
        } catch let error as LMDBError where error.code == .notFound {
            throw LedgerError(.notALedger, "\(directory) holds an LMDB environment that is not a Handover ledger")
        }
        guard [LedgerSchema.formatMarker, LedgerSchema.format2Marker, LedgerSchema.format1Marker].contains(format) else {
            throw LedgerError(.notALedger, "\(directory) holds format \(format ?? "(none)"), expected \(LedgerSchema.formatMarker)")
        }
        let isFormat1 = format == LedgerSchema.format1Marker
        if let role = options.role, let refusal = role.refusal(of: try identity(in: environment, directory: directory), at: directory) {
            throw refusal
        }
        return readOnly
            ? try openedReadOnly(directory, environment, isFormat1: isFormat1, folders: folders, options: options)
            : try openedForWriting(directory, environment, folders: folders, options: options)
    }

    /// The ledger in `environment` read as it is: a format-1 ledger without its indexes, the key
    /// store if this user may read one.
    private static func openedReadOnly(
        _ directory: String, _ environment: Environment, isFormat1: Bool, folders: [any LedgerFolder], options: Options
    ) throws -> Ledger {
        let schema: LedgerSchema
        do {
            schema = try environment.read { txn in isFormat1 ? try LedgerSchema.openFormat1(in: txn) : try LedgerSchema.open(in: txn, create: false) }
        } catch let error as LMDBError where error.code == .notFound {
            throw LedgerError.needsUpgrade(directory, "it predates the Merkle tree")
        }
        let sealer = Sealer(keyStore: try KeyStore.openReadOnly(directory: keyStoreDirectory(in: directory)))
        return try Ledger(
            directory: directory, environment: environment, schema: schema, sealer: sealer, folders: folders, options: options, upgrades: [])
    }

    /// The ledger in `environment` brought up to date (``LedgerUpgrade``), each step named in ``upgrades``.
    private static func openedForWriting(
        _ directory: String, _ environment: Environment, folders: [any LedgerFolder], options: Options
    ) throws -> Ledger {
        let upgrades = try LedgerUpgrade.runAll(directory: directory, environment: environment)
        let schema = try environment.read { try LedgerSchema.open(in: $0, create: false) }
        let keyStore = try KeyStore(directory: keyStoreDirectory(in: directory))
        return try Ledger(
            directory: directory, environment: environment, schema: schema, sealer: Sealer(keyStore: keyStore), folders: folders, options: options,
            upgrades: upgrades)
    }

    /// Events per transaction in the work a ledger does beside appends (the format upgrade,
    /// folders catching up, a projection rebuild): a transaction's dirty pages, held in memory
    /// until it commits, stay bounded however long the log is. Each new user's identifier links
    /// land on leaf pages of their own in a large ledger, so a transaction dirties a few pages
    /// per event: measured at 10M events, a rebuild peaked at 122 MB of anonymous memory with
    /// 8,192 (67 MB at 1M); 20,000 would pass 256 MB there.
    public static let eventsPerBackgroundTransaction: UInt64 = 8_192

    // MARK: Appending

    /// Appends one event; returns once it is durable (or found to be a duplicate).
    public func append(_ draft: EventDraft) async throws -> AppendOutcome {
        try await append(contentsOf: [draft])[0]
    }

    /// Appends events in order; they may share a commit with other callers' events. Returns
    /// once all are durable. Drafts that break a rule are refused before anything is written.
    public func append(contentsOf drafts: [EventDraft]) async throws -> [AppendOutcome] {
        guard let writer else { throw LedgerError(.readOnly, "\(directory) was opened read-only; nothing can be appended") }
        let prepared = try drafts.map { try PreparedEvent($0, actor: actor) }
        do {
            return try await writer.submit(prepared)
        } catch {
            throw LedgerError.classifyingWrite(error, at: directory)
        }
    }

    /// Loads in bulk each folder that has folded nothing while the log holds more than
    /// `options.bulkLoadBeyond` events, holding ``BulkLoadLock`` (so a second writable open
    /// waits for the load, then finds nothing to load); returns the most events one folder
    /// loaded. A load that fails is logged and left to the event-by-event catch-up that
    /// follows, as is anything appended meanwhile.
    private static func load(
        _ folders: [any LedgerFolder], directory: String, environment: Environment, schema: LedgerSchema, options: Options
    ) -> UInt64 {
        func needsLoad(_ folder: any LedgerFolder) throws -> Bool {
            try environment.read { txn in
                try folder.checkpoint(in: txn) == 0 && LogView(txn, schema: schema).head().sequence > options.bulkLoadBeyond
            }
        }
        var loaded: UInt64 = 0
        for folder in folders {
            do {
                guard try needsLoad(folder) else { continue }
                let folded = try BulkLoadLock.holding(
                    in: directory,
                    waiting: {
                        options.logger.notice("another process is loading this ledger's \(type(of: folder)); waiting for it")
                    }
                ) {
                    try needsLoad(folder) ? try folder.loadLog(from: environment, schema: schema) : nil
                }
                loaded = max(loaded, folded ?? 0)
            } catch {
                options.logger.warning(
                    "loading \(type(of: folder)) in bulk failed; folding the log event by event instead", metadata: ["error": "\(error)"])
            }
        }
        return loaded
    }

    /// Brings every folder up to the head, for events appended by a process without them (or
    /// all of the log, for a folder just created): `eventsPerBackgroundTransaction` events per
    /// transaction, each committing the folder's checkpoint with what it folded, so an
    /// interrupted catch-up continues where it stopped and no transaction grows with the log.
    /// Returns the number of events folded (into the folder furthest behind).
    private static func catchUp(_ folders: [any LedgerFolder], environment: Environment, schema: LedgerSchema) throws -> UInt64 {
        var folded: UInt64 = 0
        guard !folders.isEmpty else { return folded }
        while true {
            let behind = try environment.read { txn in
                let head = try LogView(txn, schema: schema).head().sequence
                return try folders.contains { try Ledger.checkpoint(of: $0, in: txn, head: head) < head }
            }
            guard behind else { return folded }
            folded += try environment.write { txn in
                let head = try LogView(txn, schema: schema).head().sequence
                var most: UInt64 = 0
                for folder in folders {
                    let from = try folder.checkpoint(in: txn)
                    guard from < head else { continue }
                    let last = head - from > Ledger.eventsPerBackgroundTransaction ? from + Ledger.eventsPerBackgroundTransaction : head
                    try Ledger.catchUp(folder, through: last, in: txn, schema: schema)
                    most = max(most, last - from)
                }
                return most
            }
        }
    }

    /// A read-only open answers only from folders that have every event: one behind the log
    /// (events appended by a process without it) needs a writable open to catch up.
    private static func checkFoldersAreCurrent(_ folders: [any LedgerFolder], environment: Environment, schema: LedgerSchema) throws {
        guard !folders.isEmpty else { return }
        try environment.read { txn in
            let head = try LogView(txn, schema: schema).head().sequence
            for folder in folders {
                let checkpoint = try Ledger.checkpoint(of: folder, in: txn, head: head)
                if checkpoint < head {
                    throw LedgerError(
                        .needsUpgrade, "its projections end at event \(checkpoint) and the log at \(head) (events appended by a process without them)"
                    )
                }
            }
        }
    }

    /// `folder`'s checkpoint, refused when it is after the log's last event `head`: folded data
    /// of events the log does not hold (an altered copy) is no picture of this log.
    private static func checkpoint(of folder: any LedgerFolder, in txn: ReadTransaction, head: UInt64) throws -> UInt64 {
        let checkpoint = try folder.checkpoint(in: txn)
        guard checkpoint <= head else {
            throw LedgerError(.malformedRecord, "the projections end at event \(checkpoint), after the log's last, \(head)")
        }
        return checkpoint
    }

    /// Folds into `folder` the events after its checkpoint through `last`: events appended by
    /// a process that did not have the folder open. The caller bounds `last` so one
    /// transaction holds at most `eventsPerBackgroundTransaction` events.
    static func catchUp(_ folder: any LedgerFolder, through last: UInt64, in txn: WriteTransaction, schema: LedgerSchema) throws {
        let checkpoint = try folder.checkpoint(in: txn)
        guard checkpoint < last else { return }
        try folder.fold(try LogView(txn, schema: schema).events((checkpoint + 1)...last), in: txn)
    }

    // MARK: Reading

    /// Lends a read view of the log to `body` in one short read transaction.
    public func read<T>(_ body: (LogView) throws -> T) throws -> T {
        try environment.read { txn in try body(LogView(txn, schema: schema)) }
    }

    /// Lends a read view of the log to `body` from async code: the read transaction is opened
    /// on a thread outside the pool async tasks run on (``OffPool``), so a long read holds
    /// up no other task, and the caller resumes once with what `body` returned.
    public func readInBackground<T: Sendable>(_ body: @escaping @Sendable (LogView) throws -> T) async throws -> T {
        try await OffPool.run { try self.read(body) }
    }

    /// The "ledger created" body: team, client IDs, role and settings.
    public func identity() throws -> LedgerCreated {
        try Ledger.identity(in: environment, schema: schema, directory: directory)
    }

    /// The "ledger created" of a ledger of any format or layout, read from the log alone
    /// before anything is upgraded.
    private static func identity(in environment: Environment, directory: String) throws -> LedgerCreated {
        try identity(
            of: try environment.read { txn in
                try LedgerSchema.logKey(1).withUnsafeBytes { key in
                    let log = try txn.openDatabase("log", create: false)
                    return try txn.get(log, key: key).map { try LogView.decode($0, sequence: 1) }
                }
            }, directory: directory)
    }

    static func identity(in environment: Environment, schema: LedgerSchema, directory: String) throws -> LedgerCreated {
        try identity(of: try environment.read { try LogView($0, schema: schema).event(1) }, directory: directory)
    }

    private static func identity(of first: RecordedEvent?, directory: String) throws -> LedgerCreated {
        guard let first, case .ledgerCreated(let created) = first.body else {
            throw LedgerError(.notALedger, "\(directory) has no \"ledger created\" event at sequence 1")
        }
        return created
    }

    /// Waits for queued appends, then stops the writer. Later appends fail with `closed`.
    public func close() { writer?.stop() }
}
