import AppleID
import Intake
import Ledger
import Projections
import Prometheus
import Synchronization

/// What `GET /metrics` serves: the counters and the histogram of ``ServeSeries``, made with
/// their help text on a swift-prometheus registry of this server's own and exposed in
/// Prometheus text format (the process-wide metrics system is left to whoever runs the server).
public final class ServerMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let appendLatency: DurationHistogram
    private let ledgerFigures: LedgerGauges
    /// What the server's own summary line reads back: events by type, suppressed refusals by route, erasures.
    private let counts = Mutex<(events: [EventType: Int], suppressed: [String: Int], erasures: Int)>(([:], [:], 0))

    public init() {
        appendLatency = ServeSeries.appendSeconds.histogram(in: registry)
        ledgerFigures = LedgerGauges(registry: registry)
        // Every series that can be zero is made now, so it is exposed from the start.
        for series in ServeSeries.counters {
            for values in series.initialValues { _ = series.counter(in: registry, values) }
        }
    }

    /// Adds one to the series of `family` with these label values.
    private func count(_ family: CounterSeries, _ values: String...) {
        family.counter(in: registry, values).increment()
    }

    /// Counts one delivery's receipt.
    public func record(_ receipt: IntakeReceipt) {
        let type = receipt.eventType
        switch receipt.outcome {
        case .recorded:
            recorded(type)
        case .duplicate:
            count(ServeSeries.deliveriesDuplicate, type.rawValue)
        case .rejected(let rejection, _):
            recorded(type)
            count(ServeSeries.rejections, rejection.reason.rawValue)
        case .suppressed(let rejection, _):
            let route = type == .signInRejected ? "sign-ins" : "notifications"
            count(ServeSeries.rejections, rejection.reason.rawValue)
            count(ServeSeries.rejectionsSuppressed, route)
            counts.withLock { $0.suppressed[route, default: 0] += 1 }
            return
        }
        if receipt.erased {
            count(ServeSeries.usersErased)
            counts.withLock { $0.erasures += 1 }
        }
        appendLatency.record(receipt.appendDuration)
    }

    private func recorded(_ type: EventType) {
        count(ServeSeries.eventsRecorded, type.rawValue)
        counts.withLock { $0.events[type, default: 0] += 1 }
    }

    /// Counts one "rejections summarized" event recorded.
    public func summarized() { recorded(.rejectionsSummarized) }

    /// Counts one HTTP answer.
    public func respond(route: String, status: Int) {
        count(ServeSeries.httpResponses, route, String(status))
    }

    /// Users erased because Apple reported their account deleted.
    public var usersErased: Int { counts.withLock { $0.erasures } }

    /// Events this server recorded, by type.
    public func events(_ type: EventType) -> Int { counts.withLock { $0.events[type] ?? 0 } }

    /// Refusals over the flood guard's budget (answered 429, not recorded one by one), by route.
    public func suppressed(route: String) -> Int { counts.withLock { $0.suppressed[route] ?? 0 } }

    /// Reads the ledger's figures for the deadline (the window, users by state, free disk)
    /// into their gauges, before a scrape.
    public func updateLedgerFigures(_ ledger: Ledger, projection: UserProjection) throws {
        try ledgerFigures.update(ledger: ledger, projection: projection)
    }

    /// The Prometheus text exposition (format 0.0.4).
    public func prometheusText() -> String { registry.emitToString() }
}
