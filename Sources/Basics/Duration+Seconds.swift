extension Duration {
    /// The duration in seconds, as a floating-point number.
    public var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// The duration as a progress line says it, in whole seconds rounded up: `45s`, `2m10s`, `3h05m`.
    public var spoken: String {
        let seconds = Int(min(max(0, inSeconds.rounded(.up)), 1e12))
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m\(pad(seconds % 60))s" }
        return "\(seconds / 3600)h\(pad(seconds % 3600 / 60))m"
    }

    private func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
