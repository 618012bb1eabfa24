import Foundation
import Relays
import Synchronization
import Testing

/// ``BoundedRelay`` is how a ledger read reaches PostgreSQL and how listings and exports
/// reach their writer: what they rely on is every item once, in order, memory bounded, and an
/// error on either side ending both.
@Suite("A bounded hand-off between threads")
struct BoundedRelayTests {
    struct ProducerFailed: Error {}
    struct ConsumerGaveUp: Error {}

    /// A count shared between the test and a producer thread.
    final class Counter: Sendable {
        private let value = Atomic(0)
        func add() { value.add(1, ordering: .sequentiallyConsistent) }
        func subtract() { value.subtract(1, ordering: .sequentiallyConsistent) }
        /// Raises the count to `other` if it is lower: a peak.
        func raise(to other: Int) {
            var current = value.load(ordering: .sequentiallyConsistent)
            while current < other {
                let (exchanged, original) = value.compareExchange(expected: current, desired: other, ordering: .sequentiallyConsistent)
                if exchanged { return }
                current = original
            }
        }
        var count: Int { value.load(ordering: .sequentiallyConsistent) }
    }

    /// Puts `count` items from a thread of its own, then finishes; returns how far the
    /// producer got ahead of what the consumer had taken, at most.
    private static func produce(_ count: Int, into handoff: BoundedRelay<Int>, taken: Counter, failing: Bool = false) -> BackgroundValue<Int> {
        BackgroundValue {
            var ahead = 0
            do {
                for i in 0..<count {
                    try handoff.put(i)
                    ahead = max(ahead, i + 1 - taken.count)
                }
                handoff.finish(failing ? .failure(ProducerFailed()) : .success(()))
            } catch {
                handoff.finish(.failure(error))
            }
            return ahead
        }
    }

    @Test("an async consumer gets every item once, in order, and the producer is never more than capacity ahead")
    func asyncConsumer() async throws {
        let handoff = BoundedRelay<Int>(capacity: 3)
        let taken = Counter()
        let producer = Self.produce(2_000, into: handoff, taken: taken)
        var received: [Int] = []
        while let item = try await handoff.next() {
            received.append(item)
            if item % 97 == 0 { try await Task.sleep(for: .milliseconds(1)) }
            taken.add()
        }
        #expect(received == Array(0..<2_000))
        // Taken but not yet counted: one; queued: at most three.
        #expect(producer.wait() <= 4)
    }

    @Test("a consumer on a thread gets every item once, in order")
    func threadConsumer() throws {
        let handoff = BoundedRelay<Int>(capacity: 1)
        let taken = Counter()
        let producer = Self.produce(5_000, into: handoff, taken: taken)
        var received: [Int] = []
        while let item = try handoff.take() {
            received.append(item)
            taken.add()
        }
        #expect(received == Array(0..<5_000))
        #expect(producer.wait() <= 2)
    }

    @Test("a producer's failure reaches the consumer after the items put before it")
    func producerFails() async throws {
        let handoff = BoundedRelay<Int>(capacity: 8)
        _ = Self.produce(5, into: handoff, taken: Counter(), failing: true)
        var received: [Int] = []
        await #expect(throws: ProducerFailed.self) {
            while let item = try await handoff.next() { received.append(item) }
        }
        #expect(received == Array(0..<5))
    }

    @Test("a consumer that gives up stops a blocked producer with its error, and the producer puts nothing more")
    func consumerAbandons() async throws {
        let handoff = BoundedRelay<Int>(capacity: 2)
        let putCount = Counter()
        let producer = BackgroundValue { () -> (any Error)? in
            do {
                for i in 0..<1_000_000 {
                    try handoff.put(i)
                    putCount.add()
                }
                return nil
            } catch { return error }
        }
        #expect(try await handoff.next() == 0)
        handoff.abandon(because: ConsumerGaveUp())
        let stopped = producer.wait()
        #expect(stopped is ConsumerGaveUp)
        // One taken, at most two queued, and the put that found the hand-off abandoned.
        #expect(putCount.count <= 3)
    }

    /// An item that counts how many of its kind are alive.
    final class Tracked: Sendable {
        let counter: Counter
        let peak: Counter
        init(_ counter: Counter, peak: Counter) {
            self.counter = counter
            self.peak = peak
            counter.add()
            peak.raise(to: counter.count)
        }
        deinit { counter.subtract() }
    }

    @Test("memory stays bounded while the producer stays ahead: no more items alive than the capacity, the one taken and the one being put")
    func boundedWhileAhead() async throws {
        let handoff = BoundedRelay<Tracked>(capacity: 4)
        let alive = Counter()
        let peak = Counter()
        let producer = BackgroundValue { () -> (any Error)? in
            do {
                for _ in 0..<3_000 { try handoff.put(Tracked(alive, peak: peak)) }
                handoff.finish()
                return nil
            } catch { return error }
        }
        var taken = 0
        while let item = try await handoff.next() {
            _ = item
            taken += 1
            if taken % 50 == 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(producer.wait() == nil)
        #expect(taken == 3_000)
        #expect(peak.count <= 6)
    }
}
