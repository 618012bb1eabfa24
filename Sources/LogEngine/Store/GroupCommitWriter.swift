import Foundation
import Logging

/// The one writer of an LMDB environment in this process, as SQLite and GRDB have one: a
/// thread that takes every submission waiting, writes them in one transaction, commits with
/// one fsync, then resumes the callers. The ledger appends events through one; the key store
/// makes data keys through another.
///
/// Callers never hold a transaction across an `await`: they hand over their items and are
/// resumed once the commit is on disk, with an outcome per item, or with the commit's error.
/// Submissions that arrive while a commit is written are taken together by the next one (up
/// to `maximumBatch` items), so many events share one fsync when many callers append.
///
/// `@unchecked Sendable`: `condition` guards the queue and the stopping state; `commit` runs
/// only on the writer's thread.
package final class GroupCommitWriter<Item: Sendable, Outcome: Sendable>: @unchecked Sendable {
    /// The items of the submissions taken, in order (each submission's items, end to end:
    /// nothing copied).
    package typealias Items = FlattenSequence<[[Item]]>
    /// Writes a batch's items in one transaction and returns one outcome per item.
    package typealias Commit = (Items) throws -> [Outcome]

    private struct Submission {
        package let items: [Item]
        package let continuation: CheckedContinuation<[Outcome], Error>
    }

    private let condition = NSCondition()
    private var queue: [Submission] = []
    private var stopping = false
    private var finished = false
    private let commit: Commit
    private let maximumBatch: Int
    private let logger: Logger
    private let name: String

    /// Starts the writer's thread, named `name` (also in log messages).
    package init(name: String, maximumBatch: Int, logger: Logger, commit: @escaping Commit) {
        self.maximumBatch = maximumBatch
        self.commit = commit
        self.logger = logger
        self.name = name
        let thread = Thread { [unowned self] in self.run() }
        thread.name = name
        thread.stackSize = 1 << 22
        thread.start()
    }

    /// Queues `items` for the next commit and returns their outcomes once durable.
    package func submit(_ items: [Item]) async throws -> [Outcome] {
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

    /// Finishes what is queued, then stops the thread; waits until it has.
    package func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    /// The writer's thread: takes what is queued, up to `maximumBatch` items (a larger
    /// submission alone), writes it, and again, until stopped with nothing queued.
    private func run() {
        while let submissions = take() {
            write(submissions)
        }
    }

    /// The submissions of the next batch, waiting for one; nil once stopped with none left.
    private func take() -> [Submission]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping { condition.wait() }
        guard !queue.isEmpty else {
            finished = true
            condition.broadcast()
            return nil
        }
        var count = queue[0].items.count
        var taken = 1
        while taken < queue.count, count + queue[taken].items.count <= maximumBatch {
            count += queue[taken].items.count
            taken += 1
        }
        let submissions = Array(queue[..<taken])
        queue.removeFirst(taken)
        return submissions
    }

    /// Commits one batch and resumes each of its callers: with their outcomes, or every one
    /// with the commit's error.
    private func write(_ submissions: [Submission]) {
        do {
            let outcomes = try commit(submissions.map(\.items).joined())
            var offset = 0
            for submission in submissions {
                let n = submission.items.count
                submission.continuation.resume(returning: Array(outcomes[offset..<(offset + n)]))
                offset += n
            }
        } catch {
            logger.error(
                "commit failed", metadata: ["writer": "\(name)", "items": "\(submissions.reduce(0) { $0 + $1.items.count })", "error": "\(error)"])
            for submission in submissions { submission.continuation.resume(throwing: error) }
        }
    }
}
