import Foundation

/// Hands batches from a thread that reads the ledger (an LMDB read transaction lives on it,
/// in a synchronous closure) to an async task that writes them out, holding at most
/// `capacity` batches: the reader blocks while the writer is behind, so memory stays bounded
/// whatever the size of the export.
final class BatchHandoff<Batch: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private let capacity: Int
    private var queued: [Batch] = []
    private var waiting: CheckedContinuation<Batch?, any Error>?
    private var ended: Result<Void, any Error>?
    private var abandoned = false

    init(capacity: Int) { self.capacity = capacity }

    /// From the reader: waits for room, then hands `batch` over. Throws once the writer has
    /// given up, so the reader stops and ends its transaction.
    func put(_ batch: Batch) throws {
        condition.lock()
        defer { condition.unlock() }
        while queued.count >= capacity && !abandoned { condition.wait() }
        if abandoned { throw CancellationError() }
        if let waiting {
            self.waiting = nil
            waiting.resume(returning: batch)
        } else {
            queued.append(batch)
        }
    }

    /// From the reader: no more batches, because it finished or failed.
    func finish(_ result: Result<Void, any Error>) {
        condition.lock()
        defer { condition.unlock() }
        ended = result
        if let waiting {
            self.waiting = nil
            waiting.resume(with: result.map { nil })
        }
    }

    /// From the writer: the next batch, or nil once the reader has finished; throws the
    /// reader's error.
    func next() async throws -> Batch? {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            defer { condition.unlock() }
            if !queued.isEmpty {
                continuation.resume(returning: queued.removeFirst())
                condition.signal()
            } else if let ended {
                continuation.resume(with: ended.map { nil })
            } else {
                waiting = continuation
            }
        }
    }

    /// From the writer: it takes no more, so a blocked or later `put` throws.
    func abandon() {
        condition.lock()
        defer { condition.unlock() }
        abandoned = true
        condition.broadcast()
    }
}
