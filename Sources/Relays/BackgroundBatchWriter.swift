/// Hands items to a writer on a second thread a batch at a time, in order, so that encoding
/// and writing one batch overlaps reading the next: the caller's thread reads and decodes,
/// the other encodes and writes. The batches go through a ``BoundedRelay`` of one.
///
/// At most three batches exist at once (the one filling, one handed over, the one being
/// written), so memory is bounded by the batch size whatever the size of the answer. A
/// writer's error is thrown by a later ``append(_:)`` or by ``finish()``; batches after it are
/// not written.
public final class BackgroundBatchWriter<Item> {
    /// A batch and the work that writes it.
    private struct Handed {
        let items: [Item]
        let write: ([Item]) throws -> Void
    }

    private let batchSize: Int
    private let prepare: ([Item]) throws -> ([Item]) throws -> Void
    private var batch: [Item] = []
    /// The hand-off to the writing thread; a new one after each ``finish()``.
    private var handoff = BoundedRelay<Handed>(capacity: 1)
    /// The writing thread's life: its error, or nil once every batch handed over is written.
    private var writing: BackgroundValue<(any Error)?>?

    /// A writer calling `write` with each batch of `batchSize` items (the last may be smaller),
    /// one call at a time, on a thread of the global queue. `write` must touch nothing the
    /// caller touches until ``finish()`` returns.
    public convenience init(batchSize: Int = 1024, write: @escaping ([Item]) throws -> Void) {
        self.init(batchSize: batchSize, preparingBatches: { _ in write })
    }

    /// A writer whose work on each batch is split in two: `prepare` runs on the caller's
    /// thread as the batch is handed over (reading what only that thread may read, say), and
    /// returns the work that writes the batch on the other thread.
    public static func preparing(batchSize: Int = 1024, _ prepare: @escaping ([Item]) throws -> ([Item]) throws -> Void) -> BackgroundBatchWriter {
        BackgroundBatchWriter(batchSize: batchSize, preparingBatches: prepare)
    }

    private init(batchSize: Int, preparingBatches prepare: @escaping ([Item]) throws -> ([Item]) throws -> Void) {
        self.batchSize = max(1, batchSize)
        self.prepare = prepare
        batch.reserveCapacity(self.batchSize)
    }

    /// Adds `item`; hands the batch over once it is full.
    public func append(_ item: Item) throws {
        batch.append(item)
        if batch.count >= batchSize { try handOver() }
    }

    /// Hands over what is left and waits until everything is written. Items appended after it
    /// go to a new writing thread, so a caller may finish between parts of its work (an export
    /// writes its rows, then rewrites events beside them).
    public func finish() throws {
        try handOver()
        handoff.finish()
        let writing = self.writing
        self.writing = nil
        handoff = BoundedRelay(capacity: 1)
        if let error = writing?.wait() { throw error }
    }

    private func handOver() throws {
        guard !batch.isEmpty else { return }
        let items = batch
        batch = []
        batch.reserveCapacity(batchSize)
        let write = try prepare(items)
        if writing == nil { writing = startWriting() }
        try handoff.put(Handed(items: items, write: write))
    }

    private func startWriting() -> BackgroundValue<(any Error)?> {
        let handoff = handoff
        return BackgroundValue {
            do {
                while let handed = try handoff.take() { try handed.write(handed.items) }
                return nil
            } catch {
                handoff.abandon(because: error)
                return error
            }
        }
    }

    deinit {
        // An abandoned writer (the caller failed) still finishes what was handed over before
        // what it writes to goes away.
        handoff.finish(.failure(CancellationError()))
        _ = writing?.wait()
    }
}
