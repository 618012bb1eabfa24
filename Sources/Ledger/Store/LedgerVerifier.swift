import Basics
import Crypto
import LMDB
import LogEngine

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
        let stored = try transaction.get(schema.byTime, key: LedgerSchema.timeKey(time)).map { try BigEndian.uint64($0) }
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
    /// Each record's envelope is read (``IndexedFields``), not its body: decoding every body
    /// is the deep check's (`verify --deep` folds every event). Reads in chunks, each in its
    /// own short read transaction; a second thread hashes one batch's leaves into the tree
    /// while this one checks the batch before, then both share the batch's chain hashes and
    /// envelopes (``LogVerification``).
    public func verify(rootAt: UInt64? = nil, progress: ((UInt64) -> Void)? = nil) throws -> VerificationReport {
        try verify(rootAt: rootAt, sizes: LogVerification.Sizes(), progress: progress)
    }

    /// ``verify(rootAt:progress:)`` reading, hashing and looking up `sizes` at a time.
    func verify(rootAt: UInt64? = nil, sizes: LogVerification.Sizes, progress: ((UInt64) -> Void)? = nil) throws -> VerificationReport {
        var verification = LogVerification(schema: schema, rootAt: rootAt, sizes: sizes)
        return try verification.run(self, progress: progress)
    }
}
