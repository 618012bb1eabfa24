import Foundation
import LMDB
import Ledger
import LogEngine
import Relays

/// The log folded again from its first event, with its output sorted before it is stored:
/// what a rebuild loads into its new generation and what the deep check compares with the
/// stored projections.
///
/// The fold reads back only its current state (each user's current record, the user each
/// identifier names), kept in memory made for it (``WorkingState``, within the fold's memory
/// budget, spilled to the scratch directory past it). Every record the projections keep goes
/// to a buffer in memory which, once full, is sorted and written out as a run file in the
/// scratch directory on a second thread while the fold fills the other buffer.
/// ``withEntries(_:)`` then merges the runs into one stream in key order, database by
/// database, so whoever stores or compares them reads and writes each page once, in order.
/// While one chunk of events is folded, the next is read and decoded on a second thread.
final class SortedFold {
    /// Run files merged once there are this many, so that a merge never holds more files open
    /// than a process may (``defaultMostRunFiles``).
    private let mostRunFiles: Int

    private let scratch: ScratchDirectory
    private let memory: WorkingMemory
    private let state: WorkingState
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
    /// The last event folded.
    private(set) var head: UInt64 = 0

    /// The memory a fold's two run buffers take together, of its memory budget: 128 MB, or an
    /// eighth of a smaller budget. Each run is half of it, so a 10M-event log writes about 140
    /// runs, merged once, into the new generation.
    static func runMemory(of budget: Int) -> Int { min(128 << 20, budget / 8) }

    /// The most run files one merge reads: all of them, up to 1,024, while the process may open
    /// that many and 128 more (about 70M events before runs are merged into runs); fewer where
    /// its open-file limit is lower.
    static let defaultMostRunFiles: Int = {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 256 }
        return Int(max(16, min(1024, Int64(clamping: limit.rlim_cur) - 128)))
    }()

    /// About what the working state takes a user, in memory or spilled: the current record and
    /// its slot, and three identifiers in the table.
    static let bytesPerUser = 300

    /// Makes the scratch directory `directory` (which must not exist, unless a killed fold left
    /// it) for a fold of the log in `ledger` in `memory` bytes: the run buffers
    /// (``runMemory(of:)``) and the working state, which spills to the scratch directory past
    /// the rest. Refused unless the directory's disk has room for what the fold writes there
    /// (``room(for:schema:memory:)``). Scratch directories that killed folds left in the
    /// temporary directory are removed first.
    init(
        directory: String, for ledger: Environment, schema: LedgerSchema, memory budget: Int = UserProjection.defaultFoldMemory,
        mostRunFiles: Int = SortedFold.defaultMostRunFiles
    ) throws {
        ScratchDirectory.sweepAbandoned()
        let scratch = try ScratchDirectory(path: directory)
        let room = try SortedFold.room(for: ledger, schema: schema, memory: budget)
        if let space = DiskSpace(at: directory), space.available < room.bytes {
            scratch.remove()
            throw LedgerError(
                .diskFull,
                "folding this ledger's log in \(directory) needs about \(DiskSpace.format(room.bytes)) free (\(room.reason)), and its disk has \(space); "
                    + "give a scratch directory (--scratch) on a disk with room")
        }
        let runMemory = SortedFold.runMemory(of: budget)
        memory = WorkingMemory(budget: budget - runMemory, directory: directory)
        do { state = try WorkingState(memory: memory) } catch {
            scratch.remove()
            throw error
        }
        runs = RunBuffer(budget: max(runMemory / 2, 1))
        self.mostRunFiles = max(mostRunFiles, 2)
        self.scratch = scratch
    }

    /// Removes the scratch directory, the working state and every run file in it, once the run
    /// being written (if one is) is.
    func remove() {
        _ = spilling?.wait()
        state.release()
        scratch.remove()
    }

    // A run being written outlives no fold: its directory goes when the fold does.
    deinit { _ = spilling?.wait() }

    /// What a fold of the log in `ledger` with `memory` bytes writes in its scratch directory,
    /// at most, and why: the runs (about the projections' size, or half the log's where there
    /// are none yet to go by), and the working state beyond the memory budget.
    static func room(for ledger: Environment, schema: LedgerSchema, memory: Int) throws -> (bytes: Int64, reason: String) {
        let plan = try FoldPlan(for: ledger, schema: schema, memory: memory)
        let reason =
            plan.spilled > 0
            ? "its sorted runs, and a working state of about \(DiskSpace.format(plan.spilled)) beyond --fold-memory" : "its sorted runs"
        return ((plan.runs + plan.spilled) / 10 * 11, reason)
    }

    /// Bytes of the working state spilled to the scratch directory so far.
    var spilledBytes: Int { memory.spilled }

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
                let store = SortedFoldStore(state: state, runs: runs)
                try store.fold(batch)
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
    var stateEntries: [(key: [UInt8], value: [UInt8])] {
        var entries: [(key: [UInt8], value: [UInt8])] = []
        if head > 0 { entries.append((ProjectionDatabases.checkpointKey, BigEndian.bytes(head))) }
        if state.users > 0 { entries.append((ProjectionDatabases.nextUserKey, BigEndian.bytes(state.users + 1))) }
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
        return try body(FoldedEntries(merge))
    }
}

/// A sorted fold's entries, table by table in ``ProjectionTable`` order and in key order
/// within each, from its merged runs: the history and the windows as written, and each
/// `migrated_order` entry as its operations, applied in order, leave it (an entry they leave
/// empty is none).
final class FoldedEntries {
    private let merge: RunMerge
    /// A record read past the `migrated_order` entry being built, given next.
    private var held: (table: ProjectionTable, key: [UInt8], value: [UInt8])?
    private var orderKey: [UInt8] = []
    private var orderValue: [UInt8] = []
    /// What ``next()`` lends out of this class (a held record, an order entry built here).
    private let lentKey = LentBytes()
    private let lentValue = LentBytes()

    init(_ merge: RunMerge) {
        self.merge = merge
    }

    /// The next entry: its table, key and value, valid until the next call; nil after the last.
    func next() throws -> (table: ProjectionTable, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
        while true {
            if let record = held {
                held = nil
                if record.table != .migratedOrder { return (record.table, lentKey.holding(record.key), lentValue.holding(record.value)) }
                if let entry = try order(startingWith: record.key, record.value) { return entry }
                continue
            }
            guard let (number, key, value) = try merge.next() else { return nil }
            let table = try ProjectionTable(number)
            guard table == .migratedOrder else { return (table, key, value) }
            if let entry = try order(startingWith: Array(key), Array(value)) { return entry }
        }
    }

    /// The `migrated_order` entry whose first operation is `key`, `value`: the operations after
    /// it on the same entry applied too (the record after them held back); nil when they leave
    /// it empty.
    private func order(
        startingWith key: [UInt8], _ value: [UInt8]
    ) throws
        -> (table: ProjectionTable, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?
    {
        orderKey = Array(key.prefix(OrderOperation.entryKeyLength))
        orderValue = try apply(key, value, to: [])
        while let (number, next, nextValue) = try merge.next() {
            let table = try ProjectionTable(number)
            guard table == .migratedOrder, next.count == OrderOperation.keyLength,
                next.prefix(OrderOperation.entryKeyLength).elementsEqual(orderKey)
            else {
                held = (table, Array(next), Array(nextValue))
                break
            }
            orderValue = try apply(Array(next), Array(nextValue), to: orderValue)
        }
        return orderValue.isEmpty ? nil : (.migratedOrder, lentKey.holding(orderKey), lentValue.holding(orderValue))
    }

    /// `value` with the operation in the record `key`, `operation` applied.
    private func apply(_ key: [UInt8], _ operation: [UInt8], to value: [UInt8]) throws -> [UInt8] {
        guard key.count == OrderOperation.keyLength, operation.count == 1, let kind = OrderOperation(rawValue: operation[0]) else {
            throw LedgerError(
                .file, "a sorted run holds a migrated_order operation of \(key.count) and \(operation.count) bytes: its file is damaged")
        }
        return try kind.applied(to: value, at: BigEndian.uint64(key, at: OrderOperation.entryKeyLength))
    }
}

/// Bytes lent out by pointer until the next ``holding(_:)``: storage of its own, grown as needed.
final class LentBytes {
    private var storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)

    deinit { storage.deallocate() }

    /// `bytes`, copied here, as a buffer valid until the next call.
    func holding(_ bytes: [UInt8]) -> UnsafeRawBufferPointer {
        if bytes.count > storage.count {
            storage.deallocate()
            storage = .allocate(byteCount: max(bytes.count, storage.count * 2), alignment: 8)
        }
        bytes.withUnsafeBytes { storage.copyMemory(from: $0) }
        return UnsafeRawBufferPointer(rebasing: storage[..<bytes.count])
    }
}
