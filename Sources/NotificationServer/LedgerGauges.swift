import Basics
import Foundation
import Ledger
import LogEngine
import Projections
import Prometheus
import Synchronization

/// The ledger's figures `/metrics` shows so that the deadline is in view: time left in the
/// window and when it closes, users by state and the settled among them, free bytes on the
/// ledger's disk. Read at each scrape, except the users: one pass over the projections, made again at most every
/// `refresh` (the states change slowly, and a pass over 10 million users is seconds).
final class LedgerGauges: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let refresh: Duration
    private let counted = Mutex<(at: ContinuousClock.Instant, gauges: [String: Gauge])?>(nil)
    private let window = Mutex<(left: Gauge, closesAt: Gauge)?>(nil)
    private let diskFree: Gauge
    private let checkpoint = Mutex<Gauge?>(nil)
    private let witnesses = Mutex<[String: (size: Gauge, at: Gauge)]>([:])
    /// `handover_runs`, every command and state from the start (a stopped run's gauge goes back to 0).
    private let runs: [String: Gauge]

    init(registry: PrometheusCollectorRegistry, refresh: Duration = .seconds(300)) {
        self.registry = registry
        self.refresh = refresh
        diskFree = ServeSeries.diskFreeBytes.gauge(in: registry)
        var runs: [String: Gauge] = [:]
        for command in RunStanding.Command.allCases {
            for state in Self.runStates { runs[command.rawValue + " " + state] = ServeSeries.runs.gauge(in: registry, [command.rawValue, state]) }
        }
        self.runs = runs
    }

    private static let runStates = ["running", "stopped", "unknown"]

    /// Reads the figures of `ledger` (with its `projection`) into their gauges.
    func update(ledger: Ledger, projection: UserProjection, now: Timestamp = .now()) throws {
        if let space = DiskSpace(at: ledger.directory) { diskFree.set(space.available) }
        try updateWitnesses(ledger: ledger)
        try updateRuns(ledger: ledger)
        let due = counted.withLock { $0.map { ContinuousClock.now - $0.at >= refresh } ?? true }
        let (transferWindow, counts): (TransferWindow?, [(series: GaugeSeries, label: String, count: Int)]?) = try projection.read(ledger) {
            snapshot, _ in
            guard due else { return (try snapshot.window(), nil) }
            var states = Dictionary(uniqueKeysWithValues: UserStatus.allCases.map { ($0.name, 0) })
            var settled = Dictionary(uniqueKeysWithValues: Settlement.allCases.map { ($0.rawValue, 0) })
            try snapshot.forEachUser { user in
                states[user.status.name, default: 0] += 1
                if let settlement = user.settlement { settled[settlement.rawValue, default: 0] += 1 }
            }
            let counts =
                states.map { (ServeSeries.users, $0.key, $0.value) } + settled.map { (ServeSeries.usersSettled, $0.key, $0.value) }
            return (try snapshot.window(), counts)
        }
        if let transferWindow {
            let gauges = window.withLock { gauges in
                if gauges == nil { gauges = (ServeSeries.windowLeft.gauge(in: registry), ServeSeries.windowClosesAt.gauge(in: registry)) }
                return gauges!
            }
            gauges.left.set(Double(max(0, transferWindow.deadline.microseconds - now.microseconds)) / 1e6)
            gauges.closesAt.set(Double(transferWindow.deadline.microseconds) / 1e6)
        }
        if let counts {
            counted.withLock { counted in
                var gauges = counted?.gauges ?? [:]
                for (series, label, count) in counts {
                    let key = series.name + "{" + label + "}"
                    let gauge = gauges[key] ?? series.gauge(in: registry, [label])
                    gauge.set(Int64(count))
                    gauges[key] = gauge
                }
                counted = (ContinuousClock.now, gauges)
            }
        }
    }

    /// The batch runs not finished, by command and state: what the alert on a stopped run reads.
    private func updateRuns(ledger: Ledger) throws {
        var counts: [String: Int] = [:]
        for run in try ledger.read({ try RunStanding.read($0, ledger: ledger.directory) }) {
            if case .finished = run.state { continue }
            counts[run.command.rawValue + " " + run.state.name, default: 0] += 1
        }
        for (key, gauge) in runs { gauge.set(Int64(counts[key] ?? 0)) }
    }

    /// The latest checkpoint's size and, for each witness configured or having cosigned, the
    /// largest checkpoint it cosigned and when: what the alert on a witness falling behind reads.
    private func updateWitnesses(ledger: Ledger) throws {
        if let size = try ledger.latestCheckpoint()?.treeSize {
            checkpoint.withLock { gauge in
                if gauge == nil { gauge = ServeSeries.checkpointSize.gauge(in: registry) }
                gauge?.set(Int64(size))
            }
        }
        let standings = try ledger.read { try WitnessStanding.read(directory: ledger.directory, view: $0) }
        witnesses.withLock { gauges in
            for standing in standings {
                let name = standing.name
                let pair =
                    gauges[name] ?? (
                        ServeSeries.witnessCosignedSize.gauge(in: registry, [name]), ServeSeries.witnessCosignedAt.gauge(in: registry, [name])
                    )
                pair.size.set(Int64(standing.cosignedSize ?? 0))
                pair.at.set(standing.cosignedAt.map { Double($0.microseconds) / 1e6 } ?? 0)
                gauges[name] = pair
            }
        }
    }
}
