/// What a load of operations measured: rate, latency percentiles, successes.
struct Measurement {
    var rate: Double
    var p50: Double
    var p99: Double
    var succeeded: Int
    /// Events recorded (filled in by the caller).
    var recorded = 0
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
    let seconds = (ContinuousClock.now - started).inSeconds
    let latencies = results.map(\.0).sorted()
    guard !latencies.isEmpty else { return Measurement(rate: 0, p50: 0, p99: 0, succeeded: 0) }
    return Measurement(rate: Double(count) / seconds, p50: latencies[latencies.count / 2], p99: latencies[min(latencies.count - 1, latencies.count * 99 / 100)],
                       succeeded: results.filter(\.1).count)
}
