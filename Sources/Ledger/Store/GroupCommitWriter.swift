import Foundation
import LMDB
import Logging

/// The one writer of an LMDB environment in this process: it takes every pending submission,
/// writes them in one transaction and commits with one fsync, then wakes the callers. The
/// ledger appends events through one; the key store makes data keys through another.
///
/// A pipelined writer has two threads: one takes the next batch and works out its writes
/// (`prepare`) while the other commits the batch before it, so the transaction holds little
/// more than the puts. Callers never hold a transaction across an `await`; they hand over
/// their items and are resumed only once the commit is on disk.
///
/// `@unchecked Sendable`: `condition` guards the queue, the prepared batch and the writer's
/// state below it; the closures run only on the writer's two threads.
final class GroupCommitWriter<Item: Sendable, Prepared: Sendable, Outcome: Sendable>: @unchecked Sendable {
    /// The items of the submissions taken, in order (each submission's items, end to end:
    /// nothing copied).
    typealias Items = FlattenSequence<[[Item]]>
    /// Works out a batch's writes before its transaction, beside the commit of the batch
    /// before it.
    typealias Prepare = (Items) -> Prepared
    /// Writes a batch's items in one transaction and returns one outcome per item.
    typealias Commit = (Items, Prepared) throws -> [Outcome]
    /// Makes the first of two batches prepared one after the other (the second over the
    /// first) one batch with the second.
    typealias Merge = (inout Prepared, Prepared) -> Void

    private struct Submission {
        let items: [Item]
        let continuation: CheckedContinuation<[Outcome], Error>
    }

    private struct Batch {
        var submissions: [Submission]
        var prepared: Prepared
        var items: Items { submissions.map(\.items).joined() }
        var count: Int { submissions.reduce(0) { $0 + $1.items.count } }
    }

    private let condition = NSCondition()
    private var queue: [Submission] = []
    /// A prepared batch the committing thread has not taken yet.
    private var handed: Batch?
    private var stopping = false
    private var taking = true
    private var finished = false
    private let prepare: Prepare
    private let merge: Merge
    private let pipelined: Bool
    private let commit: Commit
    private let maximumBatch: Int
    private let logger: Logger
    private let name: String

    /// Starts one thread, named `name` (also in log messages), that takes and commits batches.
    convenience init(name: String, maximumBatch: Int, logger: Logger, commit: @escaping (Items) throws -> [Outcome]) where Prepared == Void {
        self.init(name: name, maximumBatch: maximumBatch, logger: logger, pipelined: false, prepare: { _ in () }, merge: { _, _ in }) { items, _ in
            try commit(items)
        }
    }

    /// Starts a pipelined writer: `name` takes and prepares batches, `name`-commit commits
    /// them, one batch prepared ahead at most (grown with `merge` while it waits).
    convenience init(name: String, maximumBatch: Int, logger: Logger, prepare: @escaping Prepare, merge: @escaping Merge, commit: @escaping Commit) {
        self.init(name: name, maximumBatch: maximumBatch, logger: logger, pipelined: true, prepare: prepare, merge: merge, commit: commit)
    }

    private init(
        name: String, maximumBatch: Int, logger: Logger, pipelined: Bool, prepare: @escaping Prepare, merge: @escaping Merge, commit: @escaping Commit
    ) {
        self.maximumBatch = maximumBatch
        self.pipelined = pipelined
        self.prepare = prepare
        self.merge = merge
        self.commit = commit
        self.logger = logger
        self.name = name
        start(name) { [unowned self] in self.take() }
        if pipelined { start(name + "-commit") { [unowned self] in self.commitHanded() } }
    }

    private func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.stackSize = 1 << 22
        thread.start()
    }

    /// Queues `items` for the next commit and returns their outcomes once durable.
    func submit(_ items: [Item]) async throws -> [Outcome] {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            if stopping {
                condition.unlock()
                continuation.resume(throwing: LedgerError(.closed, "the ledger is closed (\(name))"))
                return
            }
            queue.append(Submission(items: items, continuation: continuation))
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Finishes what is queued, then stops the threads; waits until they have.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    /// The taking thread: takes what is queued, prepares it, and hands it over (or commits it,
    /// when not pipelined). A batch handed over and not yet taken by the committing thread
    /// grows by what is prepared meanwhile, up to `maximumBatch` items, so each commit holds
    /// everything queued while the one before it was written.
    private func take() {
        while true {
            condition.lock()
            while !stopping || !queue.isEmpty {
                if let first = queue.first, first.items.count <= maximumBatch - (handed?.count ?? 0) || handed == nil { break }
                condition.wait()
            }
            if queue.isEmpty {
                taking = false
                if !pipelined { finished = true }
                condition.broadcast()
                condition.unlock()
                return
            }
            let room = maximumBatch - (handed?.count ?? 0)
            var count = queue[0].items.count
            var taken = 1
            while taken < queue.count, count + queue[taken].items.count <= room {
                count += queue[taken].items.count
                taken += 1
            }
            let submissions = Array(queue[..<taken])
            queue.removeFirst(taken)
            condition.unlock()
            let batch = Batch(submissions: submissions, prepared: prepare(submissions.map(\.items).joined()))
            guard pipelined else {
                write(batch)
                continue
            }
            condition.lock()
            if var earlier = handed.take() {
                // Out of `handed` while it grows, so its storage is not copied.
                earlier.submissions += batch.submissions
                merge(&earlier.prepared, batch.prepared)
                handed = earlier
            } else {
                handed = batch
            }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The committing thread of a pipelined writer: commits each batch handed over.
    private func commitHanded() {
        while true {
            condition.lock()
            while handed == nil && taking { condition.wait() }
            guard let batch = handed else {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            handed = nil
            condition.broadcast()
            condition.unlock()
            write(batch)
        }
    }

    private func write(_ batch: Batch) {
        do {
            let outcomes = try commit(batch.items, batch.prepared)
            var offset = 0
            for submission in batch.submissions {
                let n = submission.items.count
                submission.continuation.resume(returning: Array(outcomes[offset..<(offset + n)]))
                offset += n
            }
        } catch {
            logger.error(
                "commit failed",
                metadata: ["writer": "\(name)", "items": "\(batch.submissions.reduce(0) { $0 + $1.items.count })", "error": "\(error)"])
            for submission in batch.submissions { submission.continuation.resume(throwing: error) }
        }
    }
}
