import Crypto
import LMDB

/// The result of checking a ledger's log end to end.
public struct VerificationReport: Sendable {
    /// Events checked.
    public var eventCount: UInt64
    /// The chain hash of the last good event, hex.
    public var headHash: String
    /// The first sequence number that fails, if any.
    public var firstBadSequence: UInt64?
    /// What is wrong there.
    public var problem: String?
    /// The Merkle tree head recomputed from the records checked.
    public var treeRoot: [UInt8]
    /// The tree head recomputed over the first `rootAt` events, when asked for and reached.
    public var rootAtRequestedSize: [UInt8]?
    /// Whether the log's indexes were checked too: not in a format-1 ledger read as it is,
    /// whose indexes `handover upgrade` rebuilds.
    public var indexesChecked: Bool

    /// Whether the whole log verified.
    public var isIntact: Bool { problem == nil }
}

extension LogView {
    /// Why `time_index` does not name event `last` as the last one recorded at `time`, if it does not.
    func timeIndexProblem(at time: Timestamp, last: UInt64) throws -> String? {
        let stored = try transaction.get(schema.byTime, key: LedgerSchema.timeKey(time)).map { BigEndian.uint64($0) }
        guard stored != last else { return nil }
        return "time_index names event \(stored.map(String.init) ?? "none") as the last recorded at \(time), but the log says \(last)"
    }
}

extension Ledger {
    /// Recomputes the hash chain over every event, checks dense sequence numbers, each
    /// record's `seq` and non-decreasing recorded times, the stored head, every event's entries
    /// in the type, time and idempotency indexes and the index sizes;
    /// rebuilds the Merkle tree from the records and checks every stored node and the stored
    /// right edge against it. With `rootAt`, also reports the tree head over that many events.
    /// A format-1 ledger opened read-only has its log, chain and tree checked, not its indexes.
    ///
    /// Reads in chunks, each in its own short read transaction.
    public func verify(rootAt: UInt64? = nil, progress: ((UInt64) -> Void)? = nil) throws -> VerificationReport {
        var previousHash = ChainHead.genesis.hash
        var previousTime = Timestamp(microseconds: .min)
        var expected: UInt64 = 1
        var tree = MerkleFrontier()
        // Index entries the log calls for: one `time_index` entry per recorded time (checked
        // as each time ends) and one `idempotency_index` entry per idempotency key.
        var times = 0
        var keyed = 0
        var rootAtRequestedSize: [UInt8]? = rootAt == 0 ? MerkleHash.emptyTree : nil
        let chunk: UInt64 = 50_000
        let indexed = schema.hasIndexes
        func report(_ bad: UInt64?, _ problem: String?) -> VerificationReport {
            VerificationReport(eventCount: expected - 1, headHash: Hex.encode(previousHash), firstBadSequence: bad, problem: problem,
                               treeRoot: tree.root, rootAtRequestedSize: rootAtRequestedSize, indexesChecked: indexed)
        }
        while true {
            let outcome: VerificationReport? = try read { view in
                try view.transaction.withCursor(schema.log) { cursor in
                    var entry = try cursor.seek(atLeast: LedgerSchema.logKey(expected))
                    let stop = expected + chunk
                    while let (key, value) = entry, expected < stop {
                        guard key.count == 8 else { return report(expected, "a log key has \(key.count) bytes, expected 8") }
                        let sequence = BigEndian.uint64(key)
                        guard sequence == expected else {
                            return report(expected, "event \(expected) is missing (the next key is \(sequence))")
                        }
                        guard value.count > 32 else { return report(sequence, "record has \(value.count) bytes") }
                        var hasher = SHA256()
                        hasher.update(data: previousHash)
                        hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: value[32...]))
                        let hash = Array(hasher.finalize())
                        guard hash.elementsEqual(value[0..<32]) else {
                            return report(sequence, "chain hash mismatch: the record or its stored hash was altered")
                        }
                        let event: RecordedEvent
                        do { event = try LogView.decode(value, sequence: sequence) } catch {
                            return report(sequence, "\(error)")
                        }
                        guard event.recordedAt >= previousTime else {
                            return report(sequence, "recorded_at \(event.recordedAt) is earlier than the previous event's \(previousTime)")
                        }
                        if indexed, event.recordedAt > previousTime, sequence > 1 {
                            if let problem = try view.timeIndexProblem(at: previousTime, last: sequence - 1) { return report(nil, problem) }
                            times += 1
                        }
                        if indexed {
                            // Filed under its own type (the count below rules out entries nothing calls for).
                            let sequenceKey = LedgerSchema.logKey(sequence)
                            let filed = try view.transaction.lookupCursor(schema.byType).seek(key: LedgerSchema.typeKey(event.type), valueAtLeast: sequenceKey)
                            guard let filed, filed.value.elementsEqual(sequenceKey) else {
                                return report(nil, "type_index does not file event \(sequence) under its type \(event.type.rawValue)")
                            }
                        }
                        if indexed, let key = event.idempotencyKey {
                            // Filed under its hash (the count below rules out entries nothing calls for).
                            let sequenceKey = LedgerSchema.logKey(sequence)
                            let filed = try view.transaction.lookupCursor(schema.idempotency).seek(key: LedgerSchema.idempotencyHash(key), valueAtLeast: sequenceKey)
                            guard let filed, filed.value.elementsEqual(sequenceKey) else {
                                return report(nil, "idempotency_index does not lead from key \"\(key)\" to event \(sequence)")
                            }
                            keyed += 1
                        }
                        var badNode: String?
                        try tree.append(leafHash: MerkleHash.leaf(storedRecord: value)) { level, index, node in
                            let stored = try view.transaction.get(schema.merkle, key: LedgerSchema.merkleNodeKey(level: level, index: index))
                            if stored != node, badNode == nil { badNode = "level \(level), index \(index)" }
                        }
                        if let badNode { return report(sequence, "the stored Merkle node at \(badNode) does not match the records") }
                        if tree.size == rootAt { rootAtRequestedSize = tree.root }
                        previousHash = hash
                        previousTime = event.recordedAt
                        expected += 1
                        entry = try cursor.next()
                    }
                    return nil
                }
            }
            if let outcome { return outcome }
            progress?(expected - 1)
            let done = try read { view in try view.record(expected) == nil }
            if done { break }
        }
        let last = expected - 1
        return try read { view in
            let head = try view.head()
            guard head.sequence == last, head.hash == previousHash else {
                return report(last + 1 == head.sequence ? head.sequence : last, "the stored head (\(head.sequence)) does not match the log's last event (\(last))")
            }
            guard try view.merkleFrontier() == tree else {
                return report(nil, "the stored Merkle tree edge (meta.merkle) does not match the tree rebuilt from the records")
            }
            guard indexed else { return report(nil, nil) }
            if last > 0, let problem = try view.timeIndexProblem(at: previousTime, last: last) { return report(nil, problem) }
            let timeEntries = try view.transaction.count(schema.byTime)
            let typeEntries = try view.transaction.count(schema.byType)
            let keyEntries = try view.transaction.count(schema.idempotency)
            guard timeEntries == times + (last > 0 ? 1 : 0), typeEntries == Int(last), keyEntries == keyed else {
                return report(nil, "index sizes do not match the log: \(last) events, \(timeEntries) time entries for \(times + (last > 0 ? 1 : 0)) recorded times, "
                              + "\(typeEntries) type entries, \(keyEntries) idempotency entries for \(keyed) keys")
            }
            return report(nil, nil)
        }
    }
}
