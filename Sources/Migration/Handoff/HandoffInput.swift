/// What an exchange's input was: a bare CSV, or a signed handoff package that passed its checks.
public enum HandoffInput: Sendable, Equatable {
    /// A bare CSV: nothing about its origin was checked.
    case unsigned
    /// A verified package.
    case signed(package: Int, senderTeam: String, manifestSHA256: String, receivedBefore: Bool)

    /// The word "run started" records: `signed` or `unsigned`.
    public var recorded: String {
        switch self {
        case .unsigned: "unsigned"
        case .signed: "signed"
        }
    }

    /// The package manifest's SHA-256, hex, for a signed package.
    public var manifestSHA256: String? {
        switch self {
        case .unsigned: nil
        case .signed(_, _, let digest, _): digest
        }
    }

    /// One line for the run's summary.
    var line: String {
        switch self {
        case .unsigned:
            "handoff: a bare CSV, not a signed package; recorded as unsigned (nothing proves who sent it or that it is whole)"
        case .signed(let package, let sender, let digest, let before):
            "handoff: signed package \(package) from team \(sender), verified with the pinned key\(before ? " (received before)" : ""); manifest \(digest.prefix(16))…"
        }
    }
}
