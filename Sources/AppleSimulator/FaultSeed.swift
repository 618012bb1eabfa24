import Crypto
import Foundation
import Synchronization

/// A seed that decides the stand-in's injected faults from the calls themselves, not from the
/// order they arrive: whether the n-th call about one user at one endpoint gets a fault is a
/// function of the seed, the endpoint, the user's identifier and n. Two runs with the same seed
/// and the same users (and the same stand-in directory, whose secret makes the `transfer_sub`s)
/// therefore fault the same users the same way, however many workers send the calls and in
/// whatever order.
public struct FaultSeed: Sendable, Hashable {
    public let value: UInt64

    public init(_ value: UInt64) { self.value = value }

    /// A number in [0, 1) from the seed and `parts`: the first 53 bits of
    /// SHA-256(`handover-fault-seed` ‖ seed ‖ each part, every one NUL-terminated).
    public func fraction(_ parts: [String]) -> Double {
        var hasher = SHA256()
        for part in ["handover-fault-seed", String(value)] + parts { hasher.update(data: Data((part + "\u{0}").utf8)) }
        let bits = hasher.finalize().prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Double(bits >> 11) / Double(UInt64(1) << 53)
    }
}

/// The rolls a running stand-in makes for its calls: seeded (``FaultSeed``), counting how many
/// times each identifier was asked at each endpoint, or random.
final class FaultRolls: Sendable {
    private let seed: FaultSeed?
    /// Calls seen so far by endpoint and identifier: only kept with a seed.
    private let asked = Mutex<[String: Int]>([:])

    init(seed: FaultSeed?) { self.seed = seed }

    /// The roll for one call to `endpoint` naming `identifier` (the user's `sub` or
    /// `transfer_sub`, a token call's `client_id`): its place among that identifier's calls
    /// decides it, with a seed; without one, a random number.
    func roll(endpoint: String, identifier: String) -> Double {
        guard let seed else { return Double.random(in: 0..<1) }
        let key = endpoint + "\u{0}" + identifier
        let n = asked.withLock { counts in
            defer { counts[key, default: 0] += 1 }
            return counts[key, default: 0]
        }
        return seed.fraction(["call", endpoint, identifier, String(n)])
    }
}
