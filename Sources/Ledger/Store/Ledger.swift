import Crypto
import Foundation
import LMDB
import Logging

/// One team's append-only, hash-chained event log in an LMDB environment.
///
/// Appends from any number of tasks are group-committed by one writer thread; an append
/// returns only once its event is on disk. Folders (projections) registered at open are
/// updated in the same transaction as the events they fold.
public final class Ledger: Sendable {
    /// Options for opening a ledger.
    public struct Options: Sendable {
        /// Initial map size of the log environment (it grows by itself).
        public var mapSize: Int = 64 << 20
        /// Most events one group commit writes.
        public var maximumBatch: Int = 4096
        /// Who the events are recorded by.
        public var actor: Actor = .currentProcess()
        public var logger = Logger(label: "handover.ledger")

        public init() {}
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
    private let folders: [any LedgerFolder]
    private let writer: GroupCommitWriter<PreparedEvent, AppendOutcome>

    /// The log environment's file inside a ledger directory.
    public static func dataFile(in directory: String) -> String { directory + "/data.mdb" }
    /// The key store's directory inside a ledger directory.
    public static func keyStoreDirectory(in directory: String) -> String { directory + "/keys" }

    private init(directory: String, environment: Environment, schema: LedgerSchema, folders: [any LedgerFolder], options: Options) throws {
        self.directory = directory
        self.environment = environment
        self.schema = schema
        self.actor = options.actor
        self.folders = folders
        self.sealer = Sealer(keyStore: try KeyStore(directory: Ledger.keyStoreDirectory(in: directory)))
        let commit = Ledger.makeCommit(environment: environment, schema: schema, folders: folders, actor: options.actor)
        self.writer = GroupCommitWriter(name: "handover-ledger-writer", maximumBatch: options.maximumBatch, logger: options.logger, commit: commit)
        for folder in folders { try folder.attach(to: environment) }
        try catchUpFolders()
    }

    deinit { writer.stop() }

    /// Creates a new ledger in `directory` (created if missing, refused if not empty) and
    /// records its "ledger created" event as sequence 1.
    public static func create(at directory: String, _ created: LedgerCreated, folders: [any LedgerFolder] = [], options: Options = Options()) async throws -> Ledger {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw LedgerError(.ledgerExists, "\(directory) exists and is not a directory") }
            if fm.fileExists(atPath: dataFile(in: directory)) {
                throw LedgerError(.ledgerExists, "\(directory) already holds a ledger; refusing to overwrite it")
            }
            let contents = try fm.contentsOfDirectory(atPath: directory)
            guard contents.isEmpty else {
                throw LedgerError(.ledgerExists, "\(directory) is not empty (\(contents.count) entries); choose a new or empty directory")
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
        let ledger = try Ledger(directory: directory, environment: environment, schema: schema, folders: folders, options: options)
        _ = try await ledger.append(EventDraft(.ledgerCreated(created), idempotencyKey: "ledger-created"))
        return ledger
    }

    /// Opens the existing ledger in `directory`, with a clear error when there is none.
    public static func open(at directory: String, folders: [any LedgerFolder] = [], options: Options = Options()) throws -> Ledger {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw LedgerError(.missingLedger, "no ledger at \(directory): the directory does not exist (create one with `handover init --ledger \(directory) ...`)")
        }
        guard isDirectory.boolValue, fm.fileExists(atPath: dataFile(in: directory)) else {
            throw LedgerError(.notALedger, "\(directory) is not a Handover ledger (no data.mdb); pass the directory given to `handover init`")
        }
        let environment: Environment
        do { environment = try Environment(path: directory, options: Environment.Options(mapSize: options.mapSize)) } catch let error as LMDBError {
            throw LedgerError(.notALedger, "\(directory) does not hold a readable LMDB environment (\(error))")
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
        switch format {
        case LedgerSchema.formatMarker: break
        case LedgerSchema.format1Marker: try FormatUpgrade.run(on: environment)
        default: throw LedgerError(.notALedger, "\(directory) holds format \(format ?? "(none)"), expected \(LedgerSchema.formatMarker)")
        }
        try MerkleTreeBuilder.buildIfMissing(in: environment)
        let schema = try environment.read { try LedgerSchema.open(in: $0, create: false) }
        return try Ledger(directory: directory, environment: environment, schema: schema, folders: folders, options: options)
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
        let prepared = try drafts.map { try PreparedEvent($0, actor: actor) }
        do {
            return try await writer.submit(prepared)
        } catch {
            throw LedgerError.classifyingWrite(error, at: directory)
        }
    }

    /// The transaction body of one group commit.
    private static func makeCommit(environment: Environment, schema: LedgerSchema, folders: [any LedgerFolder], actor: Actor) -> GroupCommitWriter<PreparedEvent, AppendOutcome>.Commit {
        return { batch in
            try environment.write { txn in
                let view = LogView(txn, schema: schema)
                var head = try view.head()
                var tree = try view.merkleFrontier()
                guard tree.size == head.sequence else {
                    throw LedgerError(.malformedRecord, "the Merkle tree has \(tree.size) leaves but the log \(head.sequence) events")
                }
                let recordedAt = max(Timestamp.now(), head.recordedAt)
                var outcomes: [AppendOutcome] = []
                outcomes.reserveCapacity(batch.count)
                var recorded: [RecordedEvent] = []
                recorded.reserveCapacity(batch.count)
                let firstSequence = head.sequence + 1
                var indexes = LogIndexWriter(txn, schema: schema, lastTime: head.recordedAt)
                for event in batch {
                    let sequence = head.sequence + 1
                    let sequenceKey = BigEndian.bytes(sequence)
                    if let key = event.draft.idempotencyKey, let hash = event.idempotencyHash,
                       let existing = try view.sequence(forIdempotencyKey: key, hash: hash) {
                        outcomes.append(.duplicate(of: existing))
                        continue
                    }
                    var value = [UInt8](repeating: 0, count: 32)
                    value.reserveCapacity(32 + event.prefix.count + 96)
                    value.append(contentsOf: event.prefix)
                    RecordedEvent.appendAssignedFields(to: &value, recordedAt: recordedAt, schemaVersion: event.draft.type.schemaVersion, sequence: sequence, type: event.draft.type)
                    var hasher = SHA256()
                    hasher.update(data: head.hash)
                    value.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[32...])) }
                    let hash = Array(hasher.finalize())
                    value.withUnsafeMutableBytes { $0.copyBytes(from: hash) }
                    try txn.put(schema.log, key: sequenceKey, value: value, flags: .append)
                    try value.withUnsafeBytes { try tree.append(storedRecord: $0, writingNodesTo: schema.merkle, in: txn) }
                    try indexes.index(sequenceKey, typeKey: event.typeKey, idempotencyHash: event.idempotencyHash, recordedAt: recordedAt)
                    head = ChainHead(sequence: sequence, hash: hash, recordedAt: recordedAt)
                    outcomes.append(.recorded(sequence: sequence, recordedAt: recordedAt))
                    recorded.append(RecordedEvent(sequence: sequence, recordedAt: recordedAt, actor: actor, draft: event.draft))
                }
                guard !recorded.isEmpty else { return outcomes }
                try txn.put(schema.meta, key: LedgerSchema.headKey, value: head.encoded)
                try txn.put(schema.meta, key: LedgerSchema.merkleKey, value: tree.encoded)
                for folder in folders {
                    try catchUp(folder, through: firstSequence - 1, in: txn, schema: schema)
                    try folder.fold(recorded, in: txn)
                }
                return outcomes
            }
        }
    }

    /// Brings every folder up to the head, for events appended by a process without them (or
    /// all of the log, for a folder just created): `eventsPerBackgroundTransaction` events per
    /// transaction, each committing the folder's checkpoint with what it folded, so an
    /// interrupted catch-up continues where it stopped and no transaction grows with the log.
    private func catchUpFolders() throws {
        guard !folders.isEmpty, !environment.isReadOnly else { return }
        while true {
            let behind = try environment.read { txn in
                let head = try LogView(txn, schema: schema).head().sequence
                return try folders.contains { try $0.checkpoint(in: txn) < head }
            }
            guard behind else { return }
            try environment.write { txn in
                let head = try LogView(txn, schema: schema).head().sequence
                for folder in folders {
                    let from = try folder.checkpoint(in: txn)
                    try Ledger.catchUp(folder, through: min(head, from + Ledger.eventsPerBackgroundTransaction), in: txn, schema: schema)
                }
            }
        }
    }

    /// Folds into `folder` the events after its checkpoint through `last`: events appended by
    /// a process that did not have the folder open. The caller bounds `last` so one
    /// transaction holds at most `eventsPerBackgroundTransaction` events.
    private static func catchUp(_ folder: any LedgerFolder, through last: UInt64, in txn: WriteTransaction, schema: LedgerSchema) throws {
        let first = try folder.checkpoint(in: txn) + 1
        guard first <= last else { return }
        var events: [RecordedEvent] = []
        try LogView(txn, schema: schema).forEachEvent(from: first, through: last) { events.append($0) }
        try folder.fold(events, in: txn)
    }

    // MARK: Reading

    /// Lends a read view of the log to `body` in one short read transaction.
    public func read<T>(_ body: (LogView) throws -> T) throws -> T {
        try environment.read { txn in try body(LogView(txn, schema: schema)) }
    }

    /// The "ledger created" body: team, client IDs, role and settings.
    public func identity() throws -> LedgerCreated {
        guard let first = try read({ try $0.event(1) }), case .ledgerCreated(let created) = first.body else {
            throw LedgerError(.notALedger, "\(directory) has no \"ledger created\" event at sequence 1")
        }
        return created
    }

    /// Waits for queued appends, then stops the writer. Later appends fail with `closed`.
    public func close() { writer.stop() }
}
