import Foundation

/// What a load of operations measured: rate, latency percentiles, successes.
struct Measurement {
    var rate: Double
    var p50: Double
    var p99: Double
    var succeeded: Int
    /// Events recorded (filled in by the caller).
    var recorded = 0
}

extension Measurement {
    /// `count` operations done in `seconds`, each one's latency and success in `results`.
    init(count: Int, seconds: Double, results: [(Double, Bool)]) {
        let latencies = results.map(\.0).sorted()
        guard !latencies.isEmpty else {
            self.init(rate: 0, p50: 0, p99: 0, succeeded: 0)
            return
        }
        self.init(
            rate: Double(count) / seconds, p50: latencies[latencies.count / 2], p99: latencies[min(latencies.count - 1, latencies.count * 99 / 100)],
            succeeded: results.filter(\.1).count)
    }
}

/// Runs `operation` for 0..<count from `workers` tasks; rate and latency percentiles.
func measure(count: Int, workers: Int, _ operation: @escaping @Sendable (Int) async throws -> Bool) async throws -> Measurement {
    let started = ContinuousClock.now
    let results: [(Double, Bool)] = try await withThrowingTaskGroup(of: [(Double, Bool)].self) { group in
        for worker in 0..<workers {
            group.addTask {
                var out: [(Double, Bool)] = []
                for i in stride(from: worker, to: count, by: workers) {
                    let t = ContinuousClock.now
                    let ok = try await operation(i)
                    out.append(((ContinuousClock.now - t).inSeconds, ok))
                }
                return out
            }
        }
        return try await group.reduce(into: []) { $0 += $1 }
    }
    return Measurement(count: count, seconds: (ContinuousClock.now - started).inSeconds, results: results)
}

/// Runs `operation` for 0..<count from `threads` threads, each with its own client from
/// `connect`; rate and latency percentiles.
func measureOnThreads<Client: Sendable>(
    count: Int, threads: Int, connect: () throws -> Client,
    _ operation: @escaping @Sendable (Client, Int) throws -> Bool
) throws -> Measurement {
    let clients = try (0..<threads).map { _ in try connect() }
    nonisolated(unsafe) var results = [[(Double, Bool)]](repeating: [], count: threads)
    nonisolated(unsafe) var failure: Error?
    let lock = NSLock()
    let started = ContinuousClock.now
    let group = DispatchGroup()
    for t in 0..<threads {
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            var out: [(Double, Bool)] = []
            do {
                for i in stride(from: t, to: count, by: threads) {
                    let began = ContinuousClock.now
                    let ok = try operation(clients[t], i)
                    out.append(((ContinuousClock.now - began).inSeconds, ok))
                }
            } catch {
                lock.withLock { failure = failure ?? error }
            }
            lock.withLock { results[t] = out }
        }
        thread.start()
    }
    group.wait()
    if let failure { throw failure }
    return Measurement(count: count, seconds: (ContinuousClock.now - started).inSeconds, results: results.flatMap { $0 })
}
