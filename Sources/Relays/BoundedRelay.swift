import Foundation

/// The one hand-off between a thread that produces items (one reading the ledger in a read
/// transaction, whose closure is synchronous) and the consumer of those items, an async task
/// or another thread, holding at most `capacity` items: the producer blocks while the
/// consumer is behind, so memory stays bounded whatever the size of what is read.
///
/// Items arrive once each, in order. Either side can end both: the producer by
/// ``finish(_:)`` (the consumer gets the items still queued, then nil or the producer's
/// error), the consumer by ``abandon(because:)`` (a blocked or later ``put(_:)`` throws that
/// error, so the producer stops and ends its transaction).
///
/// `condition` guards every stored property below it, hence `@unchecked Sendable`. Items
/// cross threads: when `Item` is not `Sendable` (buffers into a read transaction's memory
/// map are handed over this way), the producer must not touch an item once it is put.
public final class BoundedRelay<Item>: @unchecked Sendable {
    private let capacity: Int
    private let condition = NSCondition()
    /// At most `capacity` items, the oldest first (removing the first of so few costs nothing).
    private var queued: [Item] = []
    private var ended: Result<Void, any Error>?
    private var abandoned: (any Error)?
    /// An async consumer waiting for an item or the end.
    private var waiting: CheckedContinuation<Void, Never>?

    /// A hand-off holding at most `capacity` (at least 1) items.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    // MARK: The producer's side

    /// Waits for room, then hands `item` over. Throws the consumer's error once it has
    /// abandoned the hand-off.
    public func put(_ item: Item) throws {
        condition.lock()
        while queued.count >= capacity && abandoned == nil { condition.wait() }
        if let abandoned {
            condition.unlock()
            throw abandoned
        }
        queued.append(item)
        let woken = wakeLocked()
        condition.unlock()
        woken?.resume()
    }

    /// No more items: the producer finished, or failed with the error in `result`.
    public func finish(_ result: Result<Void, any Error> = .success(())) {
        condition.lock()
        if ended == nil { ended = result }
        let woken = wakeLocked()
        condition.unlock()
        woken?.resume()
    }

    // MARK: The consumer's side

    /// From a thread: waits for the next item; nil once the producer has finished and every
    /// item is taken. Throws the producer's error.
    public func take() throws -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let outcome = pollLocked() { return try outcome.get() }
            condition.wait()
        }
    }

    /// From an async task: the next item, waiting without blocking a thread; nil once the
    /// producer has finished and every item is taken. Throws the producer's error.
    public func next() async throws -> Item? where Item: Sendable {
        while true {
            if let outcome = poll() { return try outcome.get() }
            await withCheckedContinuation { park($0) }
        }
    }

    /// The next item, or the end, if either is there.
    private func poll() -> Result<Item?, any Error>? {
        condition.lock()
        defer { condition.unlock() }
        return pollLocked()
    }

    /// Resumes `continuation` once an item or the end is there.
    private func park(_ continuation: CheckedContinuation<Void, Never>) {
        condition.lock()
        let ready = !queued.isEmpty || ended != nil
        if !ready { waiting = continuation }
        condition.unlock()
        if ready { continuation.resume() }
    }

    /// The consumer takes no more: a blocked or later ``put(_:)`` throws `error`.
    public func abandon(because error: any Error = CancellationError()) {
        condition.lock()
        if abandoned == nil { abandoned = error }
        condition.broadcast()
        condition.unlock()
    }

    // MARK: Under the lock

    /// Takes the next item (waking a producer waiting for room), or gives the end once
    /// every item is taken; nil while neither is there.
    private func pollLocked() -> Result<Item?, any Error>? {
        guard !queued.isEmpty else { return ended.map { $0.map { nil } } }
        let item = queued.removeFirst()
        condition.broadcast()
        return .success(item)
    }

    /// Wakes every waiting thread and returns the async consumer to resume, once unlocked.
    private func wakeLocked() -> CheckedContinuation<Void, Never>? {
        condition.broadcast()
        defer { waiting = nil }
        return waiting
    }
}
