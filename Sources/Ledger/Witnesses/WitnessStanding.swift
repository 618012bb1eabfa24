import Basics
import Foundation
import LogEngine

/// One witness as `status`, `/metrics` and `witness list` show it: where it is configured (nil once removed)
/// and the largest checkpoint of this ledger it cosigned, when.
public struct WitnessStanding: Equatable, Sendable {
    public var name: String
    public var url: String?
    public var cosignedSize: Int?
    public var cosignedAt: Timestamp?

    /// The configured witnesses of the ledger in `directory` first, in their order, then any
    /// other that cosigned, by name.
    public static func read(directory: String, view: LogView) throws -> [WitnessStanding] {
        let configured = try WitnessList.read(in: directory).witnesses
        let latest = try view.latestCosignatures()
        var standings = configured.map { witness in
            let cosigned = latest[witness.key.line]
            return WitnessStanding(
                name: witness.key.name, url: witness.url, cosignedSize: cosigned?.checkpoint.treeSize, cosignedAt: cosigned?.cosignedAt)
        }
        for (line, body) in latest.sorted(by: { $0.key < $1.key }) where !configured.contains(where: { $0.key.line == line }) {
            standings.append(WitnessStanding(name: body.witnessName, url: nil, cosignedSize: body.checkpoint.treeSize, cosignedAt: body.cosignedAt))
        }
        return standings
    }

    /// "w1 cosigned 1,300 events 2 h ago", said of a witness at `now`.
    public func spoken(at now: Timestamp) -> String {
        let name = InertText.forScreen(name) + (url == nil ? " (no longer configured)" : "")
        guard let size = cosignedSize, let at = cosignedAt else { return "\(name) nothing cosigned yet" }
        return "\(name) cosigned \(counted(size, "event")) \(Duration.microseconds(max(0, now.microseconds - at.microseconds)).spoken) ago"
    }
}
