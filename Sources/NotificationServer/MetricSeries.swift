import Prometheus

/// A counter family of `/metrics`: name, label names, help text, and the label values of the
/// series exposed from the start (the others appear when first counted).
struct CounterSeries: Sendable {
    let name: String
    let labelNames: [String]
    let help: String
    var initialValues: [[String]] = []

    /// This family's counter for `values` (one per label name, in order) on `registry`, made
    /// with the family's help text the first time.
    func counter(in registry: PrometheusCollectorRegistry, _ values: [String]) -> Counter {
        precondition(values.count == labelNames.count, "\(name) takes \(labelNames.count) label value(s), not \(values.count)")
        return registry.makeCounter(descriptor: MetricNameDescriptor(wholeName: name, help: help), labels: Array(zip(labelNames, values)))
    }
}

/// A gauge family of `/metrics`: name, label names and help text.
struct GaugeSeries: Sendable {
    let name: String
    let labelNames: [String]
    let help: String

    /// This family's gauge for `values` on `registry`, made with the family's help text the first time.
    func gauge(in registry: PrometheusCollectorRegistry, _ values: [String] = []) -> Gauge {
        precondition(values.count == labelNames.count, "\(name) takes \(labelNames.count) label value(s), not \(values.count)")
        return registry.makeGauge(descriptor: MetricNameDescriptor(wholeName: name, help: help), labels: Array(zip(labelNames, values)))
    }
}

/// A histogram family of durations, without labels: name, help text and bucket bounds.
struct DurationHistogramSeries: Sendable {
    let name: String
    let help: String
    /// Upper bounds of the buckets, in seconds.
    let bounds: [Double]

    /// This family's histogram on `registry`, made with its help text and buckets the first time.
    func histogram(in registry: PrometheusCollectorRegistry) -> DurationHistogram {
        registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(wholeName: name, help: help),
            buckets: bounds.map { .nanoseconds(Int64(($0 * 1e9).rounded())) })
    }
}

extension MetricNameDescriptor {
    /// A descriptor whose ``name`` is `wholeName` as written: the descriptor joins its
    /// non-empty parts with "_", and here the name is the only one.
    init(wholeName: String, help: String) {
        self.init(metricName: wholeName, unitName: "", helpText: help)
    }
}
