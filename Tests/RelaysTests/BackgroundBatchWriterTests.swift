import Foundation
import Relays
import Testing

/// ``BackgroundBatchWriter`` hands batches to another thread: what a listing or an export relies on is
/// that every item arrives once, in order, and that a failed write is not lost.
@Suite("A batch writer on another thread")
struct BackgroundBatchWriterTests {
    /// What the writer received, shared with it (it runs on another thread).
    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [Int] = []
        private var batches: [Int] = []
        func take(_ batch: [Int]) {
            lock.lock()
            defer { lock.unlock() }
            items += batch
            batches.append(batch.count)
        }
        var all: ([Int], [Int]) {
            lock.lock()
            defer { lock.unlock() }
            return (items, batches)
        }
    }

    struct WriteFailed: Error {}

    @Test("every item once, in order, in batches of at most the batch size, all written when finish returns")
    func order() throws {
        let received = Received()
        let writer = BackgroundBatchWriter<Int>(batchSize: 7) { batch in
            usleep(UInt32.random(in: 0..<200))
            received.take(batch)
        }
        for i in 0..<1000 { try writer.append(i) }
        try writer.finish()
        let (items, batches) = received.all
        #expect(items == Array(0..<1000))
        #expect(batches.allSatisfy { $0 <= 7 } && batches.count == 143)
    }

    @Test("a write that fails is thrown by a later append or by finish, and nothing after it is written")
    func failure() throws {
        let received = Received()
        let writer = BackgroundBatchWriter<Int>(batchSize: 10) { batch in
            if batch.contains(55) { throw WriteFailed() }
            received.take(batch)
        }
        var thrown = false
        do {
            for i in 0..<1000 { try writer.append(i) }
            try writer.finish()
        } catch is WriteFailed {
            thrown = true
        }
        #expect(thrown)
        #expect(received.all.0 == Array(0..<50))
    }

    @Test("items appended after finish are written too: finish between parts of the work loses nothing")
    func appendAfterFinish() throws {
        let received = Received()
        let writer = BackgroundBatchWriter<Int>(batchSize: 4) { batch in received.take(batch) }
        for part in 0..<20 {
            for i in 0..<(part % 7) { try writer.append(part * 100 + i) }
            try writer.finish()
        }
        let expected = (0..<20).flatMap { part in (0..<(part % 7)).map { part * 100 + $0 } }
        #expect(received.all.0 == expected)
    }
}
