import AppleID
import Intake
import Foundation
import Ledger
import Synchronization

/// Counters and the append-latency histogram `GET /metrics` serves, in Prometheus text format.
public final class ServerMetrics: Sendable {
    /// Upper bounds of the append-latency buckets, in seconds.
    static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private struct State {
        var events: [String: Int] = [:]
        var duplicates: [String: Int] = [:]
        var rejections: [String: Int] = [:]
        var responses: [String: Int] = [:]
        var bucketCounts = [Int](repeating: 0, count: ServerMetrics.latencyBuckets.count)
        var latencyCount = 0
        var latencySum = 0.0
        var erasures = 0
        var suppressed: [String: Int] = [:]
        var summaries = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Counts one delivery's receipt.
    public func record(_ receipt: IntakeReceipt) {
        let seconds = receipt.appendDuration.inSeconds
        state.withLock { s in
            switch receipt.outcome {
            case .recorded: s.events[receipt.eventType.rawValue, default: 0] += 1
            case .duplicate: s.duplicates[receipt.eventType.rawValue, default: 0] += 1
            case .rejected(let rejection, _):
                s.events[receipt.eventType.rawValue, default: 0] += 1
                s.rejections[rejection.reason.rawValue, default: 0] += 1
            case .suppressed(let rejection, _):
                s.rejections[rejection.reason.rawValue, default: 0] += 1
                s.suppressed[receipt.eventType == .signInRejected ? "sign-ins" : "notifications", default: 0] += 1
                return
            }
            if receipt.erased { s.erasures += 1 }
            s.latencyCount += 1
            s.latencySum += seconds
            for (i, bound) in ServerMetrics.latencyBuckets.enumerated() where seconds <= bound { s.bucketCounts[i] += 1 }
        }
    }

    /// Counts one "rejections summarized" event recorded.
    public func summarized() { state.withLock { $0.summaries += 1 } }

    /// Refusals over the flood guard's budget (answered 429, not recorded one by one), by route.
    public func suppressed(route: String) -> Int { state.withLock { $0.suppressed[route] ?? 0 } }

    /// Counts one HTTP answer.
    public func respond(route: String, status: Int) {
        state.withLock { $0.responses["\(route)|\(status)", default: 0] += 1 }
    }

    /// Users erased because Apple reported their account deleted.
    public var usersErased: Int { state.withLock { $0.erasures } }

    /// Events this server recorded, by type.
    public func events(_ type: EventType) -> Int { state.withLock { $0.events[type.rawValue] ?? 0 } }

    /// The Prometheus text exposition (format 0.0.4).
    public func prometheusText() -> String {
        let s = state.withLock { $0 }
        var out = ""
        func family(_ name: String, _ help: String, _ type: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        family("handover_events_recorded_total", "Events this server recorded (refusals included; redeliveries not), by type.", "counter")
        for type in [EventType.notificationReceived, .notificationRejected, .signInVerified, .signInRejected] {
            out += "handover_events_recorded_total{type=\"\(type.rawValue)\"} \(s.events[type.rawValue] ?? 0)\n"
        }
        out += "handover_events_recorded_total{type=\"\(EventType.rejectionsSummarized.rawValue)\"} \(s.summaries)\n"
        family("handover_rejections_suppressed_total", "Refused deliveries over the per-source budget: answered 429, summed up instead of recorded one by one.", "counter")
        for route in ["notifications", "sign-ins"] { out += "handover_rejections_suppressed_total{route=\"\(route)\"} \(s.suppressed[route] ?? 0)\n" }
        family("handover_deliveries_duplicate_total", "Deliveries already recorded (redeliveries), acknowledged without a new event.", "counter")
        for (type, n) in s.duplicates.sorted(by: { $0.key < $1.key }) { out += "handover_deliveries_duplicate_total{type=\"\(type)\"} \(n)\n" }
        family("handover_rejections_total", "Tokens and notifications refused, by reason.", "counter")
        for reason in TokenRejection.Reason.all { out += "handover_rejections_total{reason=\"\(reason.rawValue)\"} \(s.rejections[reason.rawValue] ?? 0)\n" }
        family("handover_users_erased_total", "Users erased because Apple reported the account deleted.", "counter")
        out += "handover_users_erased_total \(s.erasures)\n"
        family("handover_http_responses_total", "HTTP answers, by route and status.", "counter")
        for (key, n) in s.responses.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "|")
            out += "handover_http_responses_total{route=\"\(parts[0])\",status=\"\(parts[1])\"} \(n)\n"
        }
        family("handover_append_seconds", "Time from handing an event to the ledger to its being durable.", "histogram")
        for (i, bound) in ServerMetrics.latencyBuckets.enumerated() {
            out += "handover_append_seconds_bucket{le=\"\(bound)\"} \(s.bucketCounts[i])\n"
        }
        out += "handover_append_seconds_bucket{le=\"+Inf\"} \(s.latencyCount)\n"
        out += "handover_append_seconds_sum \(s.latencySum)\nhandover_append_seconds_count \(s.latencyCount)\n"
        return out
    }
}
