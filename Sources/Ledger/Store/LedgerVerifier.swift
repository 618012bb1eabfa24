import Basics
import LMDB
import LogEngine

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
        var verification = LogVerification(schema: schema, format: .ledgerEvents, rootAt: rootAt, sizes: sizes)
        return try verification.run(self, progress: progress)
    }
}

extension LogRecordFormat {
    /// The ledger's events: their envelopes read by ``IndexedFields/init(json:)``, or decoded
    /// in full; each type's position that of ``EventType/allCases``.
    static let ledgerEvents = LogRecordFormat(
        types: EventType.allCases.map { (LedgerSchema.typeKey($0.rawValue), $0.rawValue) },
        indexedFields: { IndexedFields(json: $0) },
        decodedFields: { record, sequence in IndexedFields(try LogView.decode(record, sequence: sequence)) },
        idempotencyKey: { view, sequence in try view.envelope(of: sequence).idempotencyKey }
    )
}
