import Foundation
import LMDB
import Logging

/// The one writer of a ledger in this process: a dedicated thread that takes every pending
/// append, writes them in one transaction and commits with one fsync, then wakes the callers.
///
/// Callers never hold a transaction across an `await`; they hand over prepared events and
/// are resumed only once the commit is on disk.
final class GroupCommitWriter: @unchecked Sendable {
    typealias Commit = ([PreparedEvent]) throws -> [AppendOutcome]

    private struct Submission {
        let events: [PreparedEvent]
        let continuation: CheckedContinuation<[AppendOutcome], Error>
    }

    private let condition = NSCondition()
    private var queue: [Submission] = []
    private var stopping = false
    private var finished = false
    private let commit: Commit
    private let maximumBatch: Int
    private let logger: Logger

    init(maximumBatch: Int, logger: Logger, commit: @escaping Commit) {
        self.maximumBatch = maximumBatch
        self.commit = commit
        self.logger = logger
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "handover-ledger-writer"
        thread.stackSize = 1 << 22
        thread.start()
    }

    /// Queues `events` for the next commit and returns their outcomes once durable.
    func submit(_ events: [PreparedEvent]) async throws -> [AppendOutcome] {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            if stopping {
                condition.unlock()
                continuation.resume(throwing: LedgerError(.closed, "the ledger is closed"))
                return
            }
            queue.append(Submission(events: events, continuation: continuation))
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
            while taking < queue.count, taking == 0 || count + queue[taking].events.count <= maximumBatch {
                count += queue[taking].events.count
                taking += 1
            }
            let taken = Array(queue[..<taking])
            queue.removeFirst(taking)
            condition.unlock()
            write(taken)
        }
    }

    private func write(_ submissions: [Submission]) {
        let events = submissions.flatMap(\.events)
        do {
            let outcomes = try commit(events)
            var offset = 0
            for submission in submissions {
                let n = submission.events.count
                submission.continuation.resume(returning: Array(outcomes[offset..<(offset + n)]))
                offset += n
            }
        } catch {
            logger.error("ledger commit failed", metadata: ["events": "\(events.count)", "error": "\(error)"])
            for submission in submissions { submission.continuation.resume(throwing: error) }
        }
    }
}
