import Foundation
import Handoffs
import LMDB
import Ledger

/// The log folded again from its first event, with its output sorted before it is stored:
/// what a rebuild loads into its new generation and what the deep check compares with the
/// stored projections.
///
/// The fold reads and writes only its current state (each identifier's user, each user's
/// current record, `migrated_order`, the windows) in a working environment in a scratch
/// directory. Every record of the history it makes (`user_versions`, `user_links`) goes to a
/// buffer in memory which, once full, is sorted and written out as a run file beside it.
/// ``withEntries(_:)`` then merges the runs into one stream in key order, database by
/// database, so whoever stores or compares them reads and writes each page once, in order.
///
/// The working environment is thrown away after use, so its commits are not flushed
/// (`MDB_NOSYNC`) and its pages are written in place in the memory map (`MDB_WRITEMAP`): its
/// dirty pages are page cache, not this process's heap. While one chunk is folded, the next
/// is read and decoded on a second thread, and a full buffer is sorted and written out there
/// too while the fold fills the other of two (each half the run budget).
final class SortedFold {
    /// Run files merged once there are this many, so that a merge never holds more files open
    /// than a process may.
    private let mostRunFiles: Int

    private let scratch: ScratchDirectory
    private let working: Environment
    private let tables: WorkingTables
    /// The buffer the fold fills.
    private var runs: RunBuffer
    /// The other buffer, being written out as a run on a second thread (nil before the first
    /// run): once written, it is empty and the fold fills it next.
    private var spilling: BackgroundValue<Result<RunBuffer, Error>>?
    private var runFiles: [String] = []
    /// How many of the first run files are merges of earlier ones.
    private var mergedRunFiles = 0
    /// Run files written so far (their names' numbers).
    private var spills = 0
    /// The key the next new user would get.
    private var nextUserKey: UInt64 = 1
    /// The last event folded.
    private(set) var head: UInt64 = 0

    /// Makes the scratch directory `directory` (which must not exist, unless a killed fold left
    /// it) for a fold of the log in `ledger`. Refused unless its disk has room for the fold
    /// (``room(for:schema:)``): the working map is written in place, and a write to it with the
    /// disk full would kill the process. Scratch directories that killed folds left in the
    /// temporary directory are removed first.
    init(
        directory: String, for ledger: Environment, schema: LedgerSchema, runBudget: Int = UserProjection.defaultRunBudget,
        mostRunFiles: Int = 256, mapSize: Int = 1 << 30
    ) throws {
        ScratchDirectory.sweepAbandoned()
        let scratch = try ScratchDirectory(path: directory)
        let room = try SortedFold.room(for: ledger, schema: schema)
        if let space = DiskSpace(at: directory), space.available < room {
            throw LedgerError(
                .diskFull,
                "folding this ledger's log in \(directory) needs about \(DiskSpace.format(room)) free, and its disk has \(space); "
                    + "give a scratch directory (--scratch) on a disk with room")
        }
        var options = Environment.Options(mapSize: mapSize, writeMap: true)
        options.durable = false
        options.readAhead = false
        working = try Environment(path: directory, options: options)
        tables = try working.write { try WorkingTables(in: $0) }
        runs = RunBuffer(budget: max(runBudget / 2, 1))
        self.mostRunFiles = max(mostRunFiles, 2)
        self.scratch = scratch
    }

    /// Removes the scratch directory, the working environment and every run file in it, once
    /// the run being written (if one is) is.
    func remove() {
        _ = spilling?.wait()
        scratch.remove()
    }

    // A run being written outlives no fold: its directory goes when the fold does.
    deinit { _ = spilling?.wait() }

    /// The room a fold of the log in `ledger` needs: one and a half times the log's pages (the
    /// working state and the runs of a fold of 10M events peaked at 1.24 times them).
    static func room(for ledger: Environment, schema: LedgerSchema) throws -> Int64 {
        try ledger.read { txn in
            let pages = Int64(try txn.bytes(of: schema.log))
            return pages > Int64.max / 3 ? .max : pages * 3 / 2
        }
    }

    /// Folds events 1 through `head`, read by `events` (a range at a time, on a second thread
    /// while the range before is folded), `chunk` events per working transaction. `progress`
    /// hears the events folded so far, and may throw to stop.
    func fold(
        through head: UInt64, chunk: UInt64 = ProjectionAudit.eventsPerFoldTransaction,
        events: @escaping @Sendable (ClosedRange<UInt64>) throws -> [RecordedEvent],
        progress: ((UInt64) throws -> Void)? = nil
    ) throws {
        func reading(after folded: UInt64) -> BackgroundValue<Result<[RecordedEvent], Error>>? {
            guard folded < head else { return nil }
            let range = (folded + 1)...min(head, folded + chunk)
            return BackgroundValue { Result { try events(range) } }
        }
        var next = reading(after: self.head)
        while let pending = next {
            let batch = try pending.wait().get()
            guard let last = batch.last?.sequence else { break }
            next = reading(after: last)
            do {
                let mark = runs.mark
                let firstKey = nextUserKey
                // Run again, from the same state, when the map grows (in the body or at the
                // commit): what the first try gathered goes, and it counts users from the same key.
                nextUserKey = try working.write { txn in
                    runs.truncate(to: mark)
                    let store = SortedFoldStore(tables: tables, transaction: txn, runs: runs, nextUserKey: firstKey)
                    try store.fold(batch)
                    return store.nextUserKey
                }
                self.head = last
                if runs.isFull { try spill() }
                try progress?(last)
            } catch {
                // The read beside must end before its transaction or its caller goes away.
                _ = next?.wait()
                throw error
            }
        }
    }

    /// Writes the gathered records out as the next run file on a second thread, folding on
    /// into the other buffer meanwhile, once the run written before it is; merges run files
    /// first when there are `mostRunFiles` of them (``mergeRunFiles()``).
    private func spill() throws {
        let empty = try spilling?.wait().get() ?? RunBuffer(budget: runs.budget)
        spilling = nil
        if runFiles.count >= mostRunFiles { try mergeRunFiles() }
        let path = scratch.file("run-\(spills)")
        spills += 1
        runFiles.append(path)
        let full = runs
        runs = empty
        spilling = BackgroundValue {
            Result {
                try full.spill(to: path)
                return full
            }
        }
    }

    /// Merges the run files written since the last merge into one, in their place, so that
    /// each record is written again once; once merges fill half of `mostRunFiles`, all of them.
    private func mergeRunFiles() throws {
        // The newest runs, a run of files in the order written: their merge takes their place.
        let first = mergedRunFiles < mostRunFiles / 2 ? mergedRunFiles : 0
        let merged = scratch.file("run-\(spills)")
        spills += 1
        let writer = try RunFileWriter(path: merged)
        let merge = RunMerge(try runFiles[first...].map { try RunFileReader(path: $0, bufferSize: 1 << 18) })
        var record: [UInt8] = []
        while let (number, key, value) = try merge.next() {
            record.removeAll(keepingCapacity: true)
            RunRecord.append(table: try ProjectionTable(number), key: key, value: value, to: &record)
            try record.withUnsafeBytes { try writer.append($0) }
        }
        try writer.finish()
        for file in runFiles[first...] { try FileManager.default.removeItem(atPath: file) }
        runFiles = Array(runFiles[..<first]) + [merged]
        mergedRunFiles = first + 1
    }

    /// The `projection_state` entries the fold implies: its checkpoint, and the user-key
    /// counter once a user was made.
    var state: [(key: [UInt8], value: [UInt8])] {
        var entries: [(key: [UInt8], value: [UInt8])] = []
        if head > 0 { entries.append((ProjectionDatabases.checkpointKey, BigEndian.bytes(head))) }
        if nextUserKey > 1 { entries.append((ProjectionDatabases.nextUserKey, BigEndian.bytes(nextUserKey))) }
        return entries.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    }

    /// Lends `body` the folded entries in order (``FoldedEntries``). Called once, after
    /// ``fold(through:chunk:events:progress:)``.
    func withEntries<T>(_ body: (FoldedEntries) throws -> T) throws -> T {
        // Nothing is gathered any more: the other buffer's memory goes before the merge's.
        _ = try spilling?.wait().get()
        spilling = nil
        // Each run file read through a buffer: together at most 64 MB, at least 64 KB each.
        let bufferSize = max(64 << 10, min(1 << 20, (64 << 20) / max(runFiles.count, 1)))
        var sources: [SortedRun] = try runFiles.map { try RunFileReader(path: $0, bufferSize: bufferSize) }
        sources.append(runs.sortedRun())
        let merge = RunMerge(sources)
        return try working.read { txn in
            try txn.withCursor(tables.order) { order in
                try txn.withCursor(tables.windows) { windows in
                    try body(FoldedEntries(history: merge, order: order, windows: windows))
                }
            }
        }
    }
}

/// A sorted fold's entries, table by table in ``ProjectionTable`` order and in key order
/// within each: the merged history runs, then `migrated_order` and `windows` as the working
/// state holds them.
final class FoldedEntries {
    private let history: RunMerge
    private let order: Cursor
    private let windows: Cursor
    private var table = ProjectionTable.userVersions
    private var started = false

    init(history: RunMerge, order: Cursor, windows: Cursor) {
        self.history = history
        self.order = order
        self.windows = windows
    }

    /// The next entry: its table, key and value, valid until the next call; nil after the last.
    func next() throws -> (table: ProjectionTable, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
        while true {
            switch table {
            case .userVersions, .userLinks:
                if let (number, key, value) = try history.next() {
                    table = try ProjectionTable(number)
                    return (table, key, value)
                }
                table = .migratedOrder
                started = false
            case .migratedOrder, .windows:
                let cursor = table == .migratedOrder ? order : windows
                let entry = started ? try cursor.next() : try cursor.first()
                started = true
                if let (key, value) = entry { return (table, key, value) }
                guard table == .migratedOrder else { return nil }
                table = .windows
                started = false
            }
        }
    }
}
