import AppleID
import Foundation
import Intake
import Ledger
import Metrics
import Prometheus
import Synchronization

/// What `GET /metrics` serves: swift-metrics counters and a timer, exposed in Prometheus text
/// format by swift-prometheus from a registry of this server's own (the process-wide metrics
/// system is left to whoever runs the server).
public final class ServerMetrics: Sendable {
    /// Upper bounds of the append-latency buckets, in seconds.
    static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
    static let routes = ["notifications", "sign-ins"]
    private static let recordedTypes: [EventType] = [.notificationReceived, .notificationRejected, .signInVerified, .signInRejected, .rejectionsSummarized]

    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let appendLatency: Metrics.Timer
    private let erased: Metrics.Counter
    /// What the server's own summary line reads back: events by type, suppressed refusals by route, erasures.
    private let counts = Mutex<(events: [EventType: Int], suppressed: [String: Int], erasures: Int)>(([:], [:], 0))

    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["handover_append_seconds"] = ServerMetrics.latencyBuckets.map { .nanoseconds(Int64(($0 * 1e9).rounded())) }
        self.factory = factory
        appendLatency = Metrics.Timer(label: "handover_append_seconds", factory: factory)
        erased = Metrics.Counter(label: "handover_users_erased_total", factory: factory)
        // Every series that can be zero is made now, so it is exposed from the start.
        for type in ServerMetrics.recordedTypes { _ = counter("handover_events_recorded_total", ("type", type.rawValue)) }
        for reason in TokenRejection.Reason.all { _ = counter("handover_rejections_total", ("reason", reason.rawValue)) }
        for route in ServerMetrics.routes { _ = counter("handover_rejections_suppressed_total", ("route", route)) }
    }

    private func counter(_ name: String, _ dimensions: (String, String)...) -> Metrics.Counter {
        Metrics.Counter(label: name, dimensions: dimensions, factory: factory)
    }

    /// Counts one delivery's receipt.
    public func record(_ receipt: IntakeReceipt) {
        let type = receipt.eventType
        switch receipt.outcome {
        case .recorded:
            recorded(type)
        case .duplicate:
            counter("handover_deliveries_duplicate_total", ("type", type.rawValue)).increment()
        case .rejected(let rejection, _):
            recorded(type)
            counter("handover_rejections_total", ("reason", rejection.reason.rawValue)).increment()
        case .suppressed(let rejection, _):
            let route = type == .signInRejected ? "sign-ins" : "notifications"
            counter("handover_rejections_total", ("reason", rejection.reason.rawValue)).increment()
            counter("handover_rejections_suppressed_total", ("route", route)).increment()
            counts.withLock { $0.suppressed[route, default: 0] += 1 }
            return
        }
        if receipt.erased {
            erased.increment()
            counts.withLock { $0.erasures += 1 }
        }
        appendLatency.record(duration: receipt.appendDuration)
    }

    private func recorded(_ type: EventType) {
        counter("handover_events_recorded_total", ("type", type.rawValue)).increment()
        counts.withLock { $0.events[type, default: 0] += 1 }
    }

    /// Counts one "rejections summarized" event recorded.
    public func summarized() { recorded(.rejectionsSummarized) }

    /// Counts one HTTP answer.
    public func respond(route: String, status: Int) {
        counter("handover_http_responses_total", ("route", route), ("status", String(status))).increment()
    }

    /// Users erased because Apple reported their account deleted.
    public var usersErased: Int { counts.withLock { $0.erasures } }

    /// Events this server recorded, by type.
    public func events(_ type: EventType) -> Int { counts.withLock { $0.events[type] ?? 0 } }

    /// Refusals over the flood guard's budget (answered 429, not recorded one by one), by route.
    public func suppressed(route: String) -> Int { counts.withLock { $0.suppressed[route] ?? 0 } }

    /// The Prometheus text exposition (format 0.0.4).
    public func prometheusText() -> String { registry.emitToString() }
}
