import Foundation

/// A witness this ledger submits its checkpoints to: its key and where it listens.
public struct Witness: Hashable, Sendable {
    public let key: WitnessKey
    /// The witness's URL as given, `http(s)://host[:port][/prefix]`.
    public let url: String

    /// The witness at `url` with `key`; nil when `url` is not an http or https URL with a host and
    /// without a query or fragment, or holds a space (the witness list is one line per witness).
    public init?(url: String, key: WitnessKey) {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = parts.host, !host.isEmpty, parts.query == nil, parts.fragment == nil, parts.user == nil, parts.password == nil,
            !url.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 })
        else { return nil }
        self.url = url
        self.key = key
    }

    /// Where checkpoints are posted: the URL's path ending in `/add-checkpoint`
    /// (c2sp.org/tlog-witness), added unless the URL ends so already.
    public var addCheckpointURL: String {
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        return base.hasSuffix("/add-checkpoint") ? base : base + "/add-checkpoint"
    }
}
