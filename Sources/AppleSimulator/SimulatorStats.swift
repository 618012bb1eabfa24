import Foundation
import Synchronization

/// Counts of what the stand-in answered, served at `GET /simulator/stats` so rehearsals and
/// tests can see exactly which calls were made.
public final class SimulatorStats: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    public init() {}

    /// Adds one to `name` (for example `usermigrationinfo.200`, `token.invalid_client`).
    public func count(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }

    /// Every counter.
    public var snapshot: [String: Int] { counts.withLock { $0 } }

    /// The counters as a JSON object.
    public var json: String {
        SimulatorAnswers.text(snapshot)
    }
}
