import Foundation
import Handoffs
import LMDB
import Ledger

/// The log folded again from its first event into a fresh projection in a scratch environment
/// outside the ledger: what the deep check compares with the stored projections, and what a
/// rebuild loads into its new generation in key order.
///
/// The scratch environment is thrown away after use, so its commits are not flushed
/// (`MDB_NOSYNC`) and its pages are written in place in the memory map (`MDB_WRITEMAP`):
/// its dirty pages are page cache, not this process's heap. While one chunk is folded, the
/// next is read and decoded on a second thread.
public final class ScratchFold {
    /// The scratch environment (removed with its directory by whoever made it).
    let environment: Environment
    /// The projection folded into ``environment``.
    let projection = UserProjection()

    /// Events per scratch transaction: bounded by LMDB's dirty-page list (2^17 pages) at
    /// three to four pages per event, with room to spare.
    public static let eventsPerTransaction: UInt64 = 16_384

    /// A new directory's path in the temporary directory, for a fold made for `purpose`.
    public static func temporaryDirectory(for purpose: String) -> String {
        NSTemporaryDirectory() + "handover-" + purpose + "-" + UUID().uuidString
    }

    /// Creates the scratch environment in `directory` for a fold of the log in `ledger`;
    /// `directory` must not exist yet (whoever made the fold removes it after use). Refused
    /// unless its disk has room for the fold (``room(for:schema:)``): the scratch map is written
    /// in place, and a write to it with the disk full would kill the process.
    init(directory: String, for ledger: Environment, schema: LedgerSchema) throws {
        guard !FileManager.default.fileExists(atPath: directory) else {
            throw LedgerError(.file, "the scratch directory \(directory) exists; give a new one")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let room = try ScratchFold.room(for: ledger, schema: schema)
        if let space = DiskSpace(at: directory), space.available < room {
            try? FileManager.default.removeItem(atPath: directory)
            throw LedgerError(
                .diskFull,
                "folding this ledger's log in \(directory) needs about \(DiskSpace.format(room)) free, and its disk has \(space); "
                    + "give a scratch directory (--scratch) on a disk with room")
        }
        var options = Environment.Options(mapSize: 1 << 30, writeMap: true)
        options.durable = false
        options.readAhead = false
        environment = try Environment(path: directory, options: options)
        try projection.attach(to: environment)
    }

    /// The room a scratch fold of the log in `ledger` needs: one and a half times the log's
    /// pages (a fold of 1M events took 1.27 times them at its peak).
    static func room(for ledger: Environment, schema: LedgerSchema) throws -> Int64 {
        try ledger.read { txn in
            let pages = Int64(try txn.bytes(of: schema.log))
            return pages > Int64.max / 3 ? .max : pages * 3 / 2
        }
    }

    /// Folds events 1 through `head`, read by `events` (a range at a time, on a second thread
    /// while the range before is folded), `chunk` events per transaction. `progress` hears the
    /// events folded so far, and may throw to stop.
    func fold(
        through head: UInt64, chunk: UInt64 = eventsPerTransaction,
        events: @escaping @Sendable (ClosedRange<UInt64>) throws -> [RecordedEvent],
        progress: ((UInt64) throws -> Void)? = nil
    ) throws {
        func reading(after folded: UInt64) -> BackgroundValue<Result<[RecordedEvent], Error>>? {
            guard folded < head else { return nil }
            let range = (folded + 1)...min(head, folded + chunk)
            return BackgroundValue { Result { try events(range) } }
        }
        var next = reading(after: 0)
        while let pending = next {
            let batch = try pending.wait().get()
            guard let last = batch.last?.sequence else { break }
            next = reading(after: last)
            do {
                try environment.write { txn in try projection.fold(batch, in: txn) }
                try progress?(last)
            } catch {
                // The read beside must end before its transaction or its caller goes away.
                _ = next?.wait()
                throw error
            }
        }
    }

    /// Lends `body` the scratch projection's databases in a read transaction.
    func read<T>(_ body: (ReadTransaction, ProjectionDatabases) throws -> T) throws -> T {
        try environment.read { txn in try body(txn, try projection.databases(in: txn)) }
    }
}
