import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The per-record half of `verify` for one batch of stored records: each record's chain hash
/// checked and its envelope read (``IndexedFields``), by whichever threads help.
///
/// Record i is intact when SHA-256 of the stored hash before it ‖ its event JSON equals its
/// stored hash. Each check needs only stored bytes, so the records are independent: threads
/// claim them a run at a time, and the first record that fails, counted in order, is where
/// the chain breaks (every record before it is checked and intact, so the chain holds to
/// there by induction from the hash before the batch).
///
/// `@unchecked Sendable`: `claimed` and `failed` are atomics; each slot of `envelopes` is
/// written only by the thread that claimed its record and read once every helper is done;
/// `records` point into the read transaction's map, which outlives the check.
package final class BatchRecordCheck: @unchecked Sendable {
    private let records: [UnsafeRawBufferPointer]
    private let hashBefore: SHA256Hash
    /// Records checked per claim.
    private let run: Int
    private let claimed = Atomic<Int>(0)
    private let failed = Atomic<Int>(.max)
    /// Each intact record's envelope, nil where it is not in the ledger's own form; written
    /// by the thread that claimed the record.
    private let envelopes: UnsafeMutableBufferPointer<IndexedFields?>
    private let format: LogRecordFormat

    /// A check of `records` (stored values, each a chain hash and then event JSON) following
    /// the record whose stored hash is `hashBefore`, claimed `run` records at a time, their
    /// envelopes read by `format`.
    package init(_ records: [UnsafeRawBufferPointer], format: LogRecordFormat, after hashBefore: SHA256Hash, run: Int) {
        precondition(run > 0)
        self.records = records
        self.format = format
        self.hashBefore = hashBefore
        self.run = run
        envelopes = .allocate(capacity: records.count)
        envelopes.initialize(repeating: nil)
    }

    deinit {
        envelopes.deinitialize()
        envelopes.deallocate()
    }

    /// Checks runs of records until none is left unclaimed or one has failed before them.
    package func help() {
        while true {
            let start = claimed.wrappingAdd(run, ordering: .relaxed).oldValue
            guard start < records.count, start < failed.load(ordering: .relaxed) else { return }
            for i in start..<min(start + run, records.count) {
                guard intact(i) else {
                    failed.min(i, ordering: .relaxed)
                    return
                }
                envelopes[i] = format.indexedFields(UnsafeRawBufferPointer(rebasing: records[i][32...]))
            }
        }
    }

    // The two reads below are for the thread that made the check, once every helper has
    // returned: its wait for them orders their writes before its reads.

    /// The index of the first record whose hash fails, nil when all are intact.
    package var firstBroken: Int? {
        let first = failed.load(ordering: .relaxed)
        return first == .max ? nil : first
    }

    /// The envelope of record `i`, before ``firstBroken``; nil when it is not in the ledger's own form.
    package func envelope(_ i: Int) -> IndexedFields? { envelopes[i] }

    private func intact(_ i: Int) -> Bool {
        let record = records[i]
        let json = UnsafeRawBufferPointer(rebasing: record[32...])
        let computed =
            i == 0
            ? hashBefore.withUnsafeBytes { ChainHead.hash(after: $0, json: json) }
            : ChainHead.hash(after: UnsafeRawBufferPointer(rebasing: records[i - 1][0..<32]), json: json)
        return computed.withUnsafeBytes { memcmp($0.baseAddress!, record.baseAddress!, 32) == 0 }
    }
}
