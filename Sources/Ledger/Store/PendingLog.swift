import LMDB

/// The log as the batches prepared so far leave it: its head and Merkle frontier, and the
/// idempotency keys of the events prepared but not yet seen committed. It turns a batch of
/// events into the log's writes (records, Merkle nodes, indexes, head), outside the write
/// transaction that will apply them.
struct PendingLog {
    private(set) var head: ChainHead
    private var tree: MerkleFrontier
    /// Idempotency key → sequence, of the events prepared and not yet forgotten.
    private var keys: [String: UInt64] = [:]

    /// The log as `view` has it committed.
    init(reading view: LogView) throws {
        head = try view.head()
        tree = try view.merkleFrontier()
        guard tree.size == head.sequence else {
            throw LedgerError(.malformedRecord, "the Merkle tree has \(tree.size) leaves but the log \(head.sequence) events")
        }
    }

    /// What appending a batch gave: an outcome per event, and the events recorded (the rest
    /// were duplicates).
    struct Appended {
        var outcomes: [AppendOutcome] = []
        var recorded: [RecordedEvent] = []
    }

    /// Appends `events` after the head, gathering their writes in `writes`; an event whose
    /// idempotency key the log (as `view` reads it committed, or as prepared here) already
    /// holds is a duplicate and writes nothing.
    mutating func append(_ events: some Sequence<PreparedEvent>, actor: Actor, view: LogView, into writes: inout WriteBatch) throws -> Appended {
        let schema = view.schema
        let recordedAt = max(Timestamp.now(), head.recordedAt)
        var indexes = LogIndexWriter(schema: schema, lastTime: head.recordedAt)
        var appended = Appended()
        for event in events {
            if let key = event.draft.idempotencyKey, let hash = event.idempotencyHash,
                let existing = try keys[key] ?? view.sequence(forIdempotencyKey: key, hash: hash)
            {
                appended.outcomes.append(.duplicate(of: existing))
                continue
            }
            let sequence = head.sequence + 1
            let sequenceKey = BigEndian.bytes(sequence)
            var value = [UInt8](repeating: 0, count: 32)
            value.reserveCapacity(32 + event.prefix.count + 96)
            value.append(contentsOf: event.prefix)
            RecordedEvent.appendAssignedFields(
                to: &value, recordedAt: recordedAt, schemaVersion: event.draft.type.schemaVersion, sequence: sequence, type: event.draft.type)
            let hash = head.hash.withUnsafeBytes { previous in
                value.withUnsafeBytes { ChainHead.hash(after: previous, json: UnsafeRawBufferPointer(rebasing: $0[32...])).bytes }
            }
            value.withUnsafeMutableBytes { $0.copyBytes(from: hash) }
            writes.put(schema.log, key: sequenceKey, value: value, flags: .append)
            value.withUnsafeBytes { tree.append(storedRecord: $0, writingNodesTo: schema.merkle, into: &writes) }
            try indexes.index(sequenceKey, typeKey: event.typeKey, idempotencyHash: event.idempotencyHash, recordedAt: recordedAt, into: &writes)
            if let key = event.draft.idempotencyKey { keys[key] = sequence }
            head = ChainHead(sequence: sequence, hash: hash, recordedAt: recordedAt)
            appended.outcomes.append(.recorded(sequence: sequence, recordedAt: recordedAt))
            appended.recorded.append(RecordedEvent(sequence: sequence, recordedAt: recordedAt, actor: actor, draft: event.draft))
        }
        if !appended.recorded.isEmpty {
            writes.put(schema.meta, key: LedgerSchema.headKey, value: head.encoded)
            writes.put(schema.meta, key: LedgerSchema.merkleKey, value: tree.encoded)
        }
        return appended
    }

    /// Drops the idempotency keys of the events through `sequence`: they are committed, and a
    /// transaction begun from now on finds them.
    mutating func forget(through sequence: UInt64) {
        keys = keys.filter { $0.value > sequence }
    }
}
