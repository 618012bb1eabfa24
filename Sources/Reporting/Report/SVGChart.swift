import Basics
import Ledger
import Projections

/// Small inline SVG charts for the HTML report: no scripts, no external assets, and shapes
/// that print (solid fills, no transparency tricks).
enum SVGChart {
    static let width = 720.0
    static let palette = ["#1f5fa8", "#c0392b", "#2e8b57", "#b8860b", "#6a3d9a", "#555555"]

    /// A step line of cumulative migrations by day, the users-known level, and vertical
    /// markers for the deadline and the as-of time.
    static func cumulative(days: [MigrationReport.Day], usersKnown: Int, window: TransferWindow?, asOf: Timestamp) -> String {
        let height = 300.0
        let left = 56.0
        let right = 24.0
        let top = 24.0
        let bottom = 44.0
        var times = days.compactMap { Timestamp(rfc3339: $0.date) }
        if let window { times += [window.acceptedAt, window.deadline] }
        times.append(asOf)
        guard let start = times.min()?.startOfDay, let endDay = times.max()?.startOfDay else { return "" }
        let end = endDay.adding(days: 1)
        let span = Double(max(end.microseconds - start.microseconds, 1))
        let topValue = Double(max(usersKnown, days.last?.cumulative ?? 0, 1))
        func x(_ t: Timestamp) -> Double { left + (width - left - right) * Double(t.microseconds - start.microseconds) / span }
        func y(_ v: Double) -> Double { top + (height - top - bottom) * (1 - v / topValue) }
        var svg = open(height: height, label: "Cumulative users migrated by day, against the deadline")
        svg += axes(left: left, right: right, top: top, bottom: bottom, height: height)
        for i in 0...4 {
            let v = topValue * Double(i) / 4
            svg += "<line x1=\"\(f(left))\" y1=\"\(f(y(v)))\" x2=\"\(f(width - right))\" y2=\"\(f(y(v)))\" class=\"grid\"/>"
            svg += "<text x=\"\(f(left - 6))\" y=\"\(f(y(v) + 4))\" text-anchor=\"end\">\(Int(v.rounded()))</text>"
        }
        svg += "<text x=\"\(f(left))\" y=\"\(f(height - 8))\">\(start.date)</text>"
        svg += "<text x=\"\(f(width - right))\" y=\"\(f(height - 8))\" text-anchor=\"end\">\(endDay.date)</text>"
        svg +=
            "<line x1=\"\(f(left))\" y1=\"\(f(y(Double(usersKnown))))\" x2=\"\(f(width - right))\" y2=\"\(f(y(Double(usersKnown))))\" class=\"target\"/>"
        svg += "<text x=\"\(f(left + 4))\" y=\"\(f(y(Double(usersKnown)) - 5))\">users known: \(usersKnown)</text>"
        var points = "\(f(x(start))),\(f(y(0)))"
        for day in days {
            guard let t = Timestamp(rfc3339: day.date) else { continue }
            let previous = day.cumulative - day.migrated
            points +=
                " \(f(x(t))),\(f(y(Double(previous)))) \(f(x(t))),\(f(y(Double(day.cumulative)))) \(f(x(t.adding(days: 1)))),\(f(y(Double(day.cumulative))))"
        }
        if let last = days.last, let t = Timestamp(rfc3339: last.date), t.adding(days: 1) < end {
            points += " \(f(x(end))),\(f(y(Double(last.cumulative))))"
        }
        svg += "<polyline points=\"\(points)\" class=\"series\"/>"
        if let window {
            svg += marker(x: x(window.deadline), top: top, bottom: height - bottom, label: "deadline \(window.deadline.date)", cls: "deadline")
            svg += marker(x: x(window.acceptedAt), top: top, bottom: height - bottom, label: "accepted", cls: "accepted")
        }
        svg += marker(x: x(asOf), top: top + 14, bottom: height - bottom, label: "as of", cls: "asof")
        return svg + "</svg>"
    }

    /// Horizontal bars, one per row (label, value).
    static func bars(_ rows: [(label: String, value: Int)], label: String) -> String {
        guard !rows.isEmpty else { return "" }
        let rowHeight = 26.0
        let left = 200.0
        let right = 60.0
        let height = rowHeight * Double(rows.count) + 12
        let maximum = Double(rows.map(\.value).max() ?? 1)
        var svg = open(height: height, label: label)
        for (i, row) in rows.enumerated() {
            let top = 6 + rowHeight * Double(i)
            let length = (width - left - right) * Double(row.value) / max(maximum, 1)
            svg += "<text x=\"\(f(left - 8))\" y=\"\(f(top + 17))\" text-anchor=\"end\">\(HTML.escape(row.label))</text>"
            svg +=
                "<rect x=\"\(f(left))\" y=\"\(f(top + 4))\" width=\"\(f(max(length, 1)))\" height=\"\(f(rowHeight - 8))\" fill=\"\(palette[i % palette.count])\"/>"
            svg += "<text x=\"\(f(left + length + 6))\" y=\"\(f(top + 17))\">\(row.value)</text>"
        }
        return svg + "</svg>"
    }

    /// Stacked bars per day, one colour per series, with a legend.
    static func stacked(days: [(date: String, counts: [String: Int])], series: [String], label: String) -> String {
        guard !days.isEmpty else { return "" }
        let height = 260.0
        let left = 56.0
        let right = 24.0
        let top = 36.0
        let bottom = 44.0
        let maximum = Double(days.map { $0.counts.values.reduce(0, +) }.max() ?? 1)
        let slot = (width - left - right) / Double(days.count)
        func y(_ v: Double) -> Double { top + (height - top - bottom) * (1 - v / max(maximum, 1)) }
        var svg = open(height: height, label: label)
        svg += axes(left: left, right: right, top: top, bottom: bottom, height: height)
        svg += "<text x=\"\(f(left - 6))\" y=\"\(f(y(maximum) + 4))\" text-anchor=\"end\">\(Int(maximum))</text>"
        svg += "<text x=\"\(f(left - 6))\" y=\"\(f(y(0) + 4))\" text-anchor=\"end\">0</text>"
        for (i, name) in series.enumerated() {
            let x = left + Double(i) * 150
            svg += "<rect x=\"\(f(x))\" y=\"8\" width=\"12\" height=\"12\" fill=\"\(palette[i % palette.count])\"/>"
            svg += "<text x=\"\(f(x + 16))\" y=\"18\">\(HTML.escape(name))</text>"
        }
        for (d, day) in days.enumerated() {
            var base = 0.0
            for (i, name) in series.enumerated() {
                let n = Double(day.counts[name] ?? 0)
                guard n > 0 else { continue }
                svg +=
                    "<rect x=\"\(f(left + slot * Double(d) + slot * 0.15))\" y=\"\(f(y(base + n)))\" width=\"\(f(slot * 0.7))\" height=\"\(f(y(base) - y(base + n)))\" fill=\"\(palette[i % palette.count])\"/>"
                base += n
            }
        }
        svg += "<text x=\"\(f(left))\" y=\"\(f(height - 8))\">\(days.first!.date)</text>"
        svg += "<text x=\"\(f(width - right))\" y=\"\(f(height - 8))\" text-anchor=\"end\">\(days.last!.date)</text>"
        return svg + "</svg>"
    }

    private static func open(height: Double, label: String) -> String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(f(width)) \(f(height))\" width=\"100%\" role=\"img\" aria-label=\"\(HTML.escape(label))\"><title>\(HTML.escape(label))</title>"
    }

    private static func axes(left: Double, right: Double, top: Double, bottom: Double, height: Double) -> String {
        "<line x1=\"\(f(left))\" y1=\"\(f(height - bottom))\" x2=\"\(f(width - right))\" y2=\"\(f(height - bottom))\" class=\"axis\"/>"
            + "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(height - bottom))\" class=\"axis\"/>"
    }

    /// A vertical line with its label beside it, on the left when the line is near the right edge.
    private static func marker(x: Double, top: Double, bottom: Double, label: String, cls: String) -> String {
        let onLeft = x > width * 0.75
        return "<line x1=\"\(f(x))\" y1=\"\(f(top))\" x2=\"\(f(x))\" y2=\"\(f(bottom))\" class=\"\(cls)\"/>"
            + "<text x=\"\(f(onLeft ? x - 4 : x + 4))\" y=\"\(f(top + 10))\" class=\"\(cls)-label\"\(onLeft ? " text-anchor=\"end\"" : "")>\(HTML.escape(label))</text>"
    }

    /// A coordinate with one decimal.
    private static func f(_ v: Double) -> String {
        let tenths = Int((v * 10).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(abs(tenths % 10))"
    }
}

extension Timestamp {
    /// Midnight UTC of this time's day.
    var startOfDay: Timestamp {
        let day: Int64 = 86_400_000_000
        let floored = microseconds >= 0 ? microseconds / day : (microseconds - day + 1) / day
        return Timestamp(microseconds: floored * day)
    }
}
