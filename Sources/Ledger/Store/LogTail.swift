import Basics
import LMDB
import LogEngine

/// The end of the log as one group commit's transaction appends to it: the head and the Merkle
/// tree's right edge as the transaction read them, and the idempotency keys of the events the
/// batch has appended so far. Each event appended gets the next sequence number, the batch's
/// recorded time (never earlier than the event before), its chain hash, its record (written
/// with `MDB_APPEND`) and the rows stored beside it, the Merkle nodes it completes and its index
/// entries; ``finish()`` writes
/// the new head and edge.
struct LogTail {
    private let transaction: WriteTransaction
    private let view: LogView
    private(set) var head: ChainHead
    private var tree: MerkleFrontier
    private var indexes: LogIndexWriter
    /// The time every event of the batch is recorded at.
    private let recordedAt: Timestamp
    /// Idempotency key → sequence, of the events this batch appended.
    private var keys: [String: UInt64] = [:]
    private var appended = false

    /// The log's end as `transaction` reads it.
    init(in transaction: WriteTransaction, schema: LedgerSchema) throws {
        self.transaction = transaction
        view = LogView(transaction, schema: schema)
        head = try view.head()
        tree = try view.merkleFrontier()
        guard tree.size == head.sequence else {
            throw LedgerError(.malformedRecord, "the Merkle tree has \(tree.size) leaves but the log \(head.sequence) events")
        }
        recordedAt = max(Timestamp.now(), head.recordedAt)
        indexes = LogIndexWriter(schema: schema, lastTime: head.recordedAt)
    }

    /// Appends `event` after the head: the event recorded, or the sequence already holding its
    /// idempotency key (in the log, or earlier in this batch), with nothing written.
    mutating func append(_ event: PreparedEvent, actor: Actor) throws -> Result<RecordedEvent, Duplicate> {
        let schema = view.schema
        if let key = event.draft.idempotencyKey, let hash = event.idempotencyHash,
            let existing = try keys[key] ?? view.sequence(forIdempotencyKey: key, hash: hash)
        {
            return .failure(Duplicate(sequence: existing))
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
        try transaction.put(schema.log, key: sequenceKey, value: value, flags: .append)
        if !event.rows.isEmpty {
            guard let rows = schema.rows else { throw LedgerError(.needsUpgrade, "it has no rows database; open it for writing once") }
            for (index, row) in event.rows.enumerated() {
                try transaction.put(rows, key: LedgerSchema.rowKey(sequence, index), value: row, flags: .append)
            }
        }
        try value.withUnsafeBytes { try tree.append(storedRecord: $0, writingNodesTo: schema.merkle, in: transaction) }
        try indexes.index(
            sequenceKey, typeKey: event.typeKey, idempotencyHash: event.idempotencyHash, recordedAt: recordedAt, in: transaction)
        if let key = event.draft.idempotencyKey { keys[key] = sequence }
        head = ChainHead(sequence: sequence, hash: hash, recordedAt: recordedAt)
        appended = true
        return .success(RecordedEvent(sequence: sequence, recordedAt: recordedAt, actor: actor, draft: event.draft))
    }

    /// An event whose idempotency key `sequence` already holds.
    struct Duplicate: Error {
        let sequence: UInt64
    }

    /// Writes the new head and the tree's edge, when anything was appended.
    func finish() throws {
        guard appended else { return }
        try transaction.put(view.schema.meta, key: LedgerSchema.headKey, value: head.encoded)
        try transaction.put(view.schema.meta, key: LedgerSchema.merkleKey, value: tree.encoded)
    }
}
