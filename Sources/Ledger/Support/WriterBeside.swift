/// Hands items to a writer on a second thread a batch at a time, in order, so that encoding
/// and writing one batch overlaps reading the next: the caller's thread reads and decodes,
/// the other encodes and writes.
///
/// At most two batches exist at once (the one filling, the one being written), so memory is
/// bounded by the batch size whatever the size of the answer. A writer's error is thrown by
/// the next ``append(_:)`` or by ``finish()``; items after it are not written.
public final class WriterBeside<Item> {
    private let batchSize: Int
    private let prepare: ([Item]) throws -> ([Item]) throws -> Void
    private var batch: [Item] = []
    private var writing: WorkBeside<(any Error)?>?

    /// A writer calling `write` with each batch of `batchSize` items (the last may be smaller),
    /// one call at a time, on a thread of the global queue. `write` must touch nothing the
    /// caller touches until ``finish()`` returns.
    public convenience init(batchSize: Int = 1024, write: @escaping ([Item]) throws -> Void) {
        self.init(batchSize: batchSize, preparingBatches: { _ in write })
    }

    /// A writer whose work on each batch is split in two: `prepare` runs on the caller's
    /// thread as the batch is handed over (reading what only that thread may read, say), and
    /// returns the work that writes the batch on the other thread.
    public static func preparing(batchSize: Int = 1024, _ prepare: @escaping ([Item]) throws -> ([Item]) throws -> Void) -> WriterBeside {
        WriterBeside(batchSize: batchSize, preparingBatches: prepare)
    }

    private init(batchSize: Int, preparingBatches prepare: @escaping ([Item]) throws -> ([Item]) throws -> Void) {
        self.batchSize = batchSize
        self.prepare = prepare
        batch.reserveCapacity(batchSize)
    }

    /// Adds `item`; hands the batch over once it is full.
    public func append(_ item: Item) throws {
        batch.append(item)
        if batch.count >= batchSize { try handOver() }
    }

    /// Hands over what is left and waits until everything is written.
    public func finish() throws {
        try handOver()
        try waitForWriter()
    }

    private func handOver() throws {
        try waitForWriter()
        guard !batch.isEmpty else { return }
        let items = batch
        batch = []
        batch.reserveCapacity(batchSize)
        let write = try prepare(items)
        writing = WorkBeside {
            do { try write(items); return nil } catch { return error }
        }
    }

    private func waitForWriter() throws {
        guard let writing else { return }
        self.writing = nil
        if let error = writing.wait() { throw error }
    }

    deinit {
        // An abandoned writer (the caller failed) still finishes before what it writes to goes away.
        _ = writing?.wait()
    }
}
