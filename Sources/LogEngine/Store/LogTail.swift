import Basics
import LMDB

/// The end of the log as one group commit's transaction appends to it: the head and the Merkle
/// tree's right edge as the transaction read them, and the idempotency keys of the events the
/// batch has appended so far. Each event appended gets the next sequence number, the batch's
/// recorded time (never earlier than the event before), its chain hash, its record (written
/// with `MDB_APPEND`) and the rows stored beside it, the Merkle nodes it completes and its index
/// entries; ``finish()`` writes
/// the new head and edge.
package struct LogTail {
    private let transaction: WriteTransaction
    private let view: LogView
    private var head: ChainHead
    private var tree: MerkleFrontier
    private var indexes: LogIndexWriter
    /// The time every event of the batch is recorded at.
    package let recordedAt: Timestamp
    /// Idempotency key → sequence, of the events this batch appended.
    private var keys: [String: UInt64] = [:]
    private var appended = false

    /// The log's end as `transaction` reads it.
    package init(in transaction: WriteTransaction, schema: LedgerSchema) throws {
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

    /// Appends `entry` after the head: its sequence number, or the sequence already holding its
    /// idempotency key (in the log, or earlier in this batch), with nothing written.
    package mutating func append<Entry: LogEntry>(_ entry: Entry) throws -> Result<UInt64, Duplicate> {
        let schema = view.schema
        if let key = entry.idempotencyKey, let hash = entry.idempotencyHash,
            let existing = try keys[key]
                ?? view.firstSequence(filedUnderIdempotencyHash: hash, where: { try Entry.event($0, in: view, holdsIdempotencyKey: key) })
        {
            return .failure(Duplicate(sequence: existing))
        }
        let sequence = head.sequence + 1
        let sequenceKey = BigEndian.bytes(sequence)
        var value = [UInt8](repeating: 0, count: 32)
        value.reserveCapacity(32 + entry.prefix.count + 96)
        value.append(contentsOf: entry.prefix)
        entry.appendAssignedFields(to: &value, sequence: sequence, recordedAt: recordedAt)
        let hash = head.hash.withUnsafeBytes { previous in
            value.withUnsafeBytes { ChainHead.hash(after: previous, json: UnsafeRawBufferPointer(rebasing: $0[32...])).bytes }
        }
        value.withUnsafeMutableBytes { $0.copyBytes(from: hash) }
        try transaction.put(schema.log, key: sequenceKey, value: value, flags: .append)
        if !entry.rows.isEmpty {
            guard let rows = schema.rows else { throw LedgerError(.needsUpgrade, "it has no rows database; open it for writing once") }
            for (index, row) in entry.rows.enumerated() {
                try transaction.put(rows, key: LedgerSchema.rowKey(sequence, index), value: row, flags: .append)
            }
        }
        try value.withUnsafeBytes { try tree.append(storedRecord: $0, writingNodesTo: schema.merkle, in: transaction) }
        try indexes.index(
            sequenceKey, typeKey: entry.typeKey, idempotencyHash: entry.idempotencyHash, recordedAt: recordedAt, in: transaction)
        if let key = entry.idempotencyKey { keys[key] = sequence }
        head = ChainHead(sequence: sequence, hash: hash, recordedAt: recordedAt)
        appended = true
        return .success(sequence)
    }

    /// An event whose idempotency key `sequence` already holds.
    package struct Duplicate: Error {
        package let sequence: UInt64
    }

    /// Writes the new head and the tree's edge, when anything was appended.
    package func finish() throws {
        guard appended else { return }
        try transaction.put(view.schema.meta, key: LedgerSchema.headKey, value: head.encoded)
        try transaction.put(view.schema.meta, key: LedgerSchema.merkleKey, value: tree.encoded)
    }
}
