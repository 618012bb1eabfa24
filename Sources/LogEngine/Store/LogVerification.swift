import Basics
import LMDB
import Relays

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One run of ``Ledger/verify(rootAt:progress:)``: the log read once, in order, on two threads.
///
/// Records are read in batches inside read transactions of a chunk of events (``Sizes``). A
/// second thread hashes batch k's leaves into the Merkle tree (``LeafWork``) while this thread
/// checks batch k-1 against the indexes and the stored tree nodes; then both check batch k's
/// chain hashes and read its envelopes, a run at a time (``BatchRecordCheck``), so that
/// neither thread waits long for the other. Problems are reported for the first
/// event that has one, as a single-threaded pass would, except idempotency entries: those are
/// gathered, a million at a time, sorted by hash on another thread, and looked up
/// a batch's worth at each batch after, so that LMDB reads that index in order instead of at
/// random and neither the sort nor the lookups hold the other thread up.
package struct LogVerification {
    /// How much is read, hashed and looked up at a time.
    package struct Sizes {
        /// Events per read transaction, so that no reader holds old pages for long.
        package var chunk: UInt64
        /// Records hashed on the other thread at a time.
        package var batch: Int
        /// Records whose chain hashes and envelopes one thread claims at a time.
        package var chainRun: Int
        /// Idempotency entries gathered before they are sorted and looked up (16 bytes each;
        /// three such sets are held at most, while one is sorted).
        package var idempotencyBatch: Int

        /// The sizes `verify` reads with, unless others are given.
        package init(chunk: UInt64 = 65_536, batch: Int = 4096, chainRun: Int = 256, idempotencyBatch: Int = 1 << 20) {
            self.chunk = chunk
            self.batch = batch
            self.chainRun = chainRun
            self.idempotencyBatch = idempotencyBatch
        }
    }

    private let sizes: Sizes
    private let schema: LedgerSchema
    private let format: LogRecordFormat
    private let indexed: Bool
    private let rootAt: UInt64?

    /// The next sequence to check; one more than the events checked so far.
    private var expected: UInt64 = 1
    /// The chain hash and recorded time of the last event checked.
    private var previousHash = ChainHead.genesis.hash
    private var previousTime = Timestamp(microseconds: .min)
    /// The tree over the events checked (and, between batches, those hashed ahead).
    private var tree = MerkleFrontier()
    private var rootAtRequestedSize: [UInt8]?
    /// Index entries the log calls for: one `time_index` entry per recorded time, one
    /// `idempotency_index` entry per idempotency key.
    private var times = 0
    private var keyed = 0
    /// The next entries of each type's `type_index` key, read a page at a time.
    private var typeEntries: [Int: (values: [UInt64], position: Int)] = [:]
    /// Idempotency entries the log calls for, being gathered.
    private var pendingKeys: [(hash: UInt64, sequence: UInt64)] = []
    /// The set gathered before, being sorted on another thread.
    private var sortingKeys: BackgroundValue<[(hash: UInt64, sequence: UInt64)]>?
    /// What is left to look up of that set, sorted.
    private var sortedKeys: ArraySlice<(hash: UInt64, sequence: UInt64)> = []

    /// A check of the log `schema` describes, whose records `format` reads; with `rootAt`, the
    /// tree head over that many events is reported too.
    package init(schema: LedgerSchema, format: LogRecordFormat, rootAt: UInt64?, sizes: Sizes = Sizes()) {
        self.sizes = sizes
        self.schema = schema
        self.format = format
        self.indexed = schema.hasIndexes
        self.rootAt = rootAt
        rootAtRequestedSize = rootAt == 0 ? MerkleHash.emptyTree : nil
    }

    /// Records read in one transaction, from `first` on (the buffers point into its map).
    private struct Batch {
        package var first: UInt64
        package var records: [UnsafeRawBufferPointer] = []
        /// What is wrong just after the records, when reading stopped for a reason.
        package var problem: (sequence: UInt64, text: String)?

        /// Drops the records from `index` on, whose chain hash does not match.
        package mutating func cut(at index: Int) {
            records.removeSubrange(index...)
            problem = (first + UInt64(index), "chain hash mismatch: the record or its stored hash was altered")
        }
    }

    /// What the other thread computed for one batch, in order: its leaves in the tree.
    private struct LeafWork {
        /// The tree before the batch's leaves, and after them.
        package var before: MerkleFrontier
        package var after: MerkleFrontier
        /// Nodes at a stored level the batch completed: after which record, where, and the hash.
        package var nodes: [(record: Int, level: Int, index: UInt64, hash: SHA256Hash)]
        /// The tree head when the tree reached the requested size in this batch.
        package var rootAt: [UInt8]?

        package init(_ batch: Batch, tree: MerkleFrontier, rootAt: UInt64?) {
            var tree = tree
            before = tree
            var nodes: [(record: Int, level: Int, index: UInt64, hash: SHA256Hash)] = []
            for (i, record) in batch.records.enumerated() {
                tree.append(leaf: MerkleHash.leafHash(storedRecord: record)) { level, index, node in nodes.append((i, level, index, node)) }
                if tree.size == rootAt { self.rootAt = tree.root }
            }
            after = tree
            self.nodes = nodes
        }
    }

    private func report(_ bad: UInt64?, _ problem: String?) -> VerificationReport {
        VerificationReport(
            eventCount: expected - 1, headHash: Hex.encode(previousHash), firstBadSequence: bad, problem: problem,
            treeRoot: tree.root, rootAtRequestedSize: rootAtRequestedSize, indexesChecked: indexed)
    }

    /// Checks the whole log, a chunk per read transaction of `log`, calling `progress` with
    /// the events checked after each chunk.
    package mutating func run(_ log: some LogReading, progress: ((UInt64) -> Void)?) throws -> VerificationReport {
        while true {
            if let outcome = try log.read({ view in try verifyChunk(view) }) { return outcome }
            progress?(expected - 1)
        }
    }

    /// Checks up to ``chunk`` events in `view`; the report once the log ends there or a
    /// problem is found, nil to go on in a new transaction.
    private mutating func verifyChunk(_ view: LogView) throws -> VerificationReport? {
        let stop = expected + sizes.chunk
        return try view.transaction.withCursor(schema.log) { cursor in
            var entry = try cursor.seek(atLeast: LedgerSchema.logKey(expected))
            var pending: (batch: Batch, records: BatchRecordCheck, work: BackgroundValue<LeafWork>)?
            // The other thread reads this transaction's map: whatever ends the chunk (a report,
            // an error) waits for it first.
            var inFlight: BackgroundValue<LeafWork>?
            defer { _ = inFlight?.wait() }
            while true {
                // Read the next batch while the other thread hashes the one before.
                var next = Batch(first: pending.map { $0.batch.first + UInt64($0.batch.records.count) } ?? expected)
                next.records.reserveCapacity(sizes.batch)
                let reading = pending?.batch.problem == nil
                while reading, let (key, value) = entry, next.first + UInt64(next.records.count) < stop, next.records.count < sizes.batch {
                    let sequence = next.first + UInt64(next.records.count)
                    guard key.count == 8 else {
                        next.problem = (sequence, "a log key has \(key.count) bytes, expected 8")
                        break
                    }
                    let found = try BigEndian.uint64(key)
                    guard found == sequence else {
                        next.problem = (sequence, "event \(sequence) is missing (the next key is \(found))")
                        break
                    }
                    guard value.count > 32 else {
                        next.problem = (sequence, "record has \(value.count) bytes")
                        break
                    }
                    next.records.append(value)
                    entry = try cursor.next()
                }
                let hashed = pending.map { $0.work.wait() }
                if let broken = pending?.records.firstBroken { pending?.batch.cut(at: broken) }
                if let hashed { tree = hashed.after }
                // Both threads check the next batch's records: the other after its leaves, this
                // one after checking the batch before.
                let records = BatchRecordCheck(
                    next.records, format: format, after: pending?.batch.records.last.flatMap { SHA256Hash($0) } ?? SHA256Hash(previousHash)!,
                    run: sizes.chainRun)
                let started =
                    next.records.isEmpty
                    ? nil
                    : BackgroundValue { [next, tree, rootAt] in
                        let work = LeafWork(next, tree: tree, rootAt: rootAt)
                        records.help()
                        return work
                    }
                inFlight = started
                if let pending, let hashed, let outcome = try check(pending.batch, pending.records, hashed, view) { return outcome }
                records.help()
                guard let started else {
                    if let problem = next.problem { return report(problem.sequence, problem.text) }
                    // Nothing left in this chunk: the log ends here, or the next chunk begins.
                    if entry == nil { return try finish(view) }
                    return nil
                }
                pending = (next, records, started)
            }
        }
    }

    /// Checks a batch whose records have been checked (and cut where the chain breaks), in
    /// order: each record's envelope, recorded time, index entries and the stored tree nodes it
    /// completes; then the problem that cut it, if any.
    private mutating func check(_ batch: Batch, _ records: BatchRecordCheck, _ work: LeafWork, _ view: LogView) throws -> VerificationReport? {
        var node = 0
        for (i, record) in batch.records.enumerated() {
            let sequence = batch.first + UInt64(i)
            func failed(_ bad: UInt64?, _ problem: String) -> VerificationReport {
                tree = Self.tree(work.before, plus: batch.records[..<i])
                return report(bad, problem)
            }
            let fields: IndexedFields
            if let read = records.envelope(i), read.sequence == sequence {
                fields = read
            } else {
                // Not in the ledger's own form: the full decode names the problem, or reads it.
                do { fields = try format.decodedFields(record, sequence) } catch { return failed(sequence, "\(error)") }
            }
            guard fields.recordedAt >= previousTime else {
                return failed(sequence, "recorded_at \(fields.recordedAt) is earlier than the previous event's \(previousTime)")
            }
            if indexed {
                if fields.recordedAt > previousTime, sequence > 1 {
                    if let problem = try view.timeIndexProblem(at: previousTime, last: sequence - 1) { return failed(nil, problem) }
                    times += 1
                }
                // Filed under its own type (the count in `finish` rules out entries nothing calls for).
                guard try nextTypeEntry(fields.type, is: sequence, view) else {
                    return failed(nil, "type_index does not file event \(sequence) under its type \(format.types[fields.type].name)")
                }
                if let hash = fields.idempotencyHash {
                    pendingKeys.append((hash, sequence))
                    keyed += 1
                }
            }
            while node < work.nodes.count, work.nodes[node].record == i {
                let (_, level, index, hash) = work.nodes[node]
                let stored = try LedgerSchema.merkleNodeKey(level: level, index: index).withUnsafeBytes { key in
                    try view.transaction.get(schema.merkle, key: key).flatMap { $0.count == 32 ? SHA256Hash($0) : nil }
                }
                guard stored == hash else {
                    return failed(sequence, "the stored Merkle node at level \(level), index \(index) does not match the records")
                }
                node += 1
            }
            if sequence == rootAt { rootAtRequestedSize = work.rootAt }
            previousTime = fields.recordedAt
            expected = sequence + 1
        }
        if let last = batch.records.last { previousHash = Array(last[0..<32]) }
        // The other thread hashed the whole batch (`tree` is already after it); a batch cut
        // short by its chain ends sooner.
        if work.after.size - work.before.size != UInt64(batch.records.count) { tree = Self.tree(work.before, plus: batch.records[...]) }
        // Twice the batch: the set is looked up before the next one is gathered.
        if let problem = try lookUpSortedKeys(view, atMost: max(2 * batch.records.count, 1)) { return report(nil, problem) }
        if pendingKeys.count >= sizes.idempotencyBatch {
            // The set before is looked up by now, but for the last few when the sizes are small.
            if let problem = try lookUpSortedKeys(view, atMost: .max) { return report(nil, problem) }
            let keys = pendingKeys
            sortingKeys = BackgroundValue { keys.sorted(by: Self.hashOrder) }
            pendingKeys.removeAll(keepingCapacity: true)
        }
        if let problem = batch.problem { return report(problem.sequence, problem.text) }
        return nil
    }

    /// `tree` with the leaves of `records` added.
    private static func tree(_ tree: MerkleFrontier, plus records: ArraySlice<UnsafeRawBufferPointer>) -> MerkleFrontier {
        var tree = tree
        for record in records { tree.append(leaf: MerkleHash.leafHash(storedRecord: record)) { _, _, _ in } }
        return tree
    }

    /// Whether `sequence` is the next entry of `type`'s `type_index` key from `sequence` on.
    private mutating func nextTypeEntry(_ type: Int, is sequence: UInt64, _ view: LogView) throws -> Bool {
        var (values, position) = typeEntries[type] ?? ([], 0)
        if position == values.count || values[position] != sequence {
            values = try view.sequences(ofTypeKey: format.types[type].key, from: sequence, through: .max, atMost: 4096)
            position = 0
            guard values.first == sequence else { return false }
        }
        typeEntries[type] = (values, position + 1)
        return true
    }

    private static func hashOrder(_ a: (hash: UInt64, sequence: UInt64), _ b: (hash: UInt64, sequence: UInt64)) -> Bool {
        a.hash != b.hash ? a.hash < b.hash : a.sequence < b.sequence
    }

    /// Looks up the next `count` entries of the sorted set, once its sort has finished, or
    /// all of them (waiting for the sort) when `count` is `.max`; the first one missing, if any.
    private mutating func lookUpSortedKeys(_ view: LogView, atMost count: Int) throws -> String? {
        if let sorting = sortingKeys {
            guard count == .max || sorting.isFinished else { return nil }
            sortedKeys = sorting.wait()[...]
            sortingKeys = nil
        }
        guard !sortedKeys.isEmpty else { return nil }
        let now = sortedKeys.prefix(count)
        // Let go of the set once it is all looked up (a slice keeps its whole array).
        sortedKeys = now.count == sortedKeys.count ? [] : sortedKeys.dropFirst(now.count)
        return try lookUp(now, view)
    }

    /// Looks up idempotency entries, in the order given; the first one missing, if any.
    private func lookUp(_ keys: ArraySlice<(hash: UInt64, sequence: UInt64)>, _ view: LogView) throws -> String? {
        try view.transaction.withCursor(schema.idempotency) { cursor in
            for (hash, sequence) in keys {
                let filed = try withUnsafeBytes(of: hash.bigEndian) { key in
                    try withUnsafeBytes(of: sequence.bigEndian) { value in try cursor.seek(key: key, valueAtLeast: value) }
                }
                guard let filed, try BigEndian.uint64(filed.value) == sequence else {
                    let key = try format.idempotencyKey(view, sequence) ?? ""
                    return "idempotency_index does not lead from key \"\(key)\" to event \(sequence)"
                }
            }
            return nil
        }
    }

    /// At the end of the log: the stored head, the stored tree edge, the last recorded time
    /// and the index sizes, in the transaction that found the end.
    private mutating func finish(_ view: LogView) throws -> VerificationReport {
        let last = expected - 1
        let head = try view.head()
        guard head.sequence == last, head.hash == previousHash else {
            return report(
                last + 1 == head.sequence ? head.sequence : last, "the stored head (\(head.sequence)) does not match the log's last event (\(last))")
        }
        guard try view.merkleFrontier() == tree else {
            return report(nil, "the stored Merkle tree edge (meta.merkle) does not match the tree rebuilt from the records")
        }
        guard indexed else { return report(nil, nil) }
        if let problem = try lookUpSortedKeys(view, atMost: .max) { return report(nil, problem) }
        if let problem = try lookUp(pendingKeys.sorted(by: Self.hashOrder)[...], view) { return report(nil, problem) }
        if last > 0, let problem = try view.timeIndexProblem(at: previousTime, last: last) { return report(nil, problem) }
        let timeEntries = try view.transaction.count(schema.byTime)
        let typeEntries = try view.transaction.count(schema.byType)
        let keyEntries = try view.transaction.count(schema.idempotency)
        guard timeEntries == times + (last > 0 ? 1 : 0), typeEntries == Int(last), keyEntries == keyed else {
            return report(
                nil,
                "index sizes do not match the log: \(last) events, \(timeEntries) time entries for \(times + (last > 0 ? 1 : 0)) recorded times, "
                    + "\(typeEntries) type entries, \(keyEntries) idempotency entries for \(keyed) keys")
        }
        return report(nil, nil)
    }
}

extension LogView {
    /// Why `time_index` does not name event `last` as the last one recorded at `time`, if it does not.
    package func timeIndexProblem(at time: Timestamp, last: UInt64) throws -> String? {
        let stored = try transaction.get(schema.byTime, key: LedgerSchema.timeKey(time)).map { try BigEndian.uint64($0) }
        guard stored != last else { return nil }
        return "time_index names event \(stored.map(String.init) ?? "none") as the last recorded at \(time), but the log says \(last)"
    }
}
