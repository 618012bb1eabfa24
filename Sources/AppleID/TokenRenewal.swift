/// When an access token is renewed: while a share of its lifetime is still left, so that no
/// call still on its way when the token expires ever carries it.
public struct TokenRenewal: Sendable {
    /// Renew when this share of the lifetime is left.
    public var fraction: Double
    /// ... but never earlier than this many seconds before expiry.
    public var maximumMargin: Double

    /// The default renews Apple's 3600 s tokens 300 s before expiry (a fifth of the lifetime,
    /// at most five minutes): far longer than any call may take. `fraction` is kept within
    /// 0...0.95, so a token always serves a while.
    public init(fraction: Double = 0.2, maximumMargin: Double = 300) {
        self.fraction = min(max(fraction, 0), 0.95)
        self.maximumMargin = max(maximumMargin, 0)
    }

    /// How long before expiry a token of `lifetime` seconds is renewed, seconds.
    public func margin(lifetime: Double) -> Double { min(maximumMargin, lifetime * fraction) }
}
