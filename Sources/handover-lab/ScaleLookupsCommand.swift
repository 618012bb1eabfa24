import ArgumentParser
import Basics
import Foundation
import Ledger
import Projections

/// `handover-lab scale-lookups`: what `handover query user ID [--as-of T]` computes (the
/// user's row and history), timed in process for identifiers and times from `scale-write`.
struct ScaleLookupsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale-lookups", abstract: "Time query user, now and as of a time, in process; print p50/p99 as JSON.")

    @Option var ledger: String
    @Option(help: "The JSON scale-write printed (sample_users, sample_times).") var samples: String
    @Option var count = 2_000

    func run() throws {
        let written: ScaleWriteSummary
        do { written = try JSONDecoder().decode(ScaleWriteSummary.self, from: Data(contentsOf: URL(fileURLWithPath: samples))) } catch {
            throw ValidationError("\(samples) is not what scale-write printed: \(error)")
        }
        let users = written.sampleUsers
        let times = written.sampleTimes.compactMap(Timestamp.init(rfc3339:))
        guard !users.isEmpty, !times.isEmpty else { throw ValidationError("\(samples) has no sample_users or sample_times") }
        let projection = UserProjection()
        let ledger = try Ledger.open(at: self.ledger, folders: [projection])
        defer { ledger.close() }
        var generator = SystemRandomNumberGenerator()
        var now: [Double] = []
        var asOf: [Double] = []
        var found = 0
        for n in 0..<count {
            let id = users[n % users.count][n % 3]
            let time: Timestamp? = n % 2 == 0 ? nil : times.randomElement(using: &generator)
            let start = DispatchTime.now()
            let user = try projection.read(ledger, asOf: time) { snapshot, _ in
                try ComplianceQueries(snapshot: snapshot, time: time ?? .now(), sealer: nil).user(id)
            }
            if let user {
                _ = try EventQuery.history(of: user.state, until: time, in: ledger, projection: projection)
                found += 1
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            if time == nil { now.append(seconds) } else { asOf.append(seconds) }
        }
        func p(_ values: [Double], _ q: Double) -> Double { values.sorted()[min(values.count - 1, Int(Double(values.count) * q))] * 1e3 }
        print(
            "{\"lookups\":\(count),\"found\":\(found),\"now_p50_ms\":\(p(now, 0.5)),\"now_p99_ms\":\(p(now, 0.99)),\"as_of_p50_ms\":\(p(asOf, 0.5)),\"as_of_p99_ms\":\(p(asOf, 0.99))}"
        )
    }
}
