import Foundation
import LMDB
import Logging

/// The one writer of an LMDB environment in this process: a dedicated thread that takes every
/// pending submission, writes them in one transaction and commits with one fsync, then wakes
/// the callers. The ledger appends events through one; the key store makes data keys through
/// another.
///
/// Callers never hold a transaction across an `await`; they hand over their items and are
/// resumed only once the commit is on disk.
final class GroupCommitWriter<Item: Sendable, Outcome: Sendable>: @unchecked Sendable {
    /// Writes the items of the submissions taken, in order (each submission's items, end to
    /// end: nothing copied), and returns one outcome per item.
    typealias Commit = (FlattenSequence<[[Item]]>) throws -> [Outcome]

    private struct Submission {
        let items: [Item]
        let continuation: CheckedContinuation<[Outcome], Error>
    }

    private let condition = NSCondition()
    private var queue: [Submission] = []
    private var stopping = false
    private var finished = false
    private let commit: Commit
    private let maximumBatch: Int
    private let logger: Logger
    private let name: String

    /// Starts the writer thread, named `name` (also in log messages).
    init(name: String, maximumBatch: Int, logger: Logger, commit: @escaping Commit) {
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
    func submit(_ items: [Item]) async throws -> [Outcome] {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            if stopping {
                condition.unlock()
                continuation.resume(throwing: LedgerError(.closed, "the ledger is closed (\(name))"))
                return
            }
            queue.append(Submission(items: items, continuation: continuation))
            condition.signal()
            condition.unlock()
        }
    }

    /// Finishes what is queued, then stops the thread; waits until it has.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty && stopping {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            var taking = 0
            var count = 0
            while taking < queue.count, taking == 0 || count + queue[taking].items.count <= maximumBatch {
                count += queue[taking].items.count
                taking += 1
            }
            let taken = Array(queue[..<taking])
            queue.removeFirst(taking)
            condition.unlock()
            write(taken)
        }
    }

    private func write(_ submissions: [Submission]) {
        let items = submissions.map(\.items).joined()
        do {
            let outcomes = try commit(items)
            var offset = 0
            for submission in submissions {
                let n = submission.items.count
                submission.continuation.resume(returning: Array(outcomes[offset..<(offset + n)]))
                offset += n
            }
        } catch {
            logger.error("commit failed", metadata: ["writer": "\(name)", "items": "\(submissions.reduce(0) { $0 + $1.items.count })", "error": "\(error)"])
            for submission in submissions { submission.continuation.resume(throwing: error) }
        }
    }
}
