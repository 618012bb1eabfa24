import Basics
import LMDB

extension Ledger {
    /// `verify --deep`'s check of the person index: recomputes it from the events alone and
    /// compares the root every "person index committed" event holds, and the stored index's,
    /// with the root over as many events. Returns what differs first; nil when all agree (or the
    /// ledger has neither commits nor an index yet). Reads in short read transactions, on both cores.
    public func auditPersonIndex(progress: ((UInt64) -> Void)? = nil) throws -> PersonIndexFinding {
        var finding = PersonIndexFinding()
        // The sizes to compare at: each commit's, and the stored index's.
        var expected: [UInt64: [(what: String, root: String)]] = [:]
        let head = try read { view -> UInt64 in
            for sequence in try view.sequences(of: .personIndexCommitted) {
                guard case .personIndexCommitted(let body) = try view.eventAsLogged(sequence)?.body else { continue }
                guard UInt64(body.indexedSize) < sequence else {
                    finding.problem = "event \(sequence) commits the person index over \(body.indexedSize) events, not all before it"
                    return 0
                }
                expected[UInt64(body.indexedSize), default: []].append(("event \(sequence)", body.root))
                finding.commits += 1
            }
            if let stored = try view.personIndexState() {
                expected[stored.indexedSize, default: []].append(("the stored index", Hex.encode(stored.root.bytes)))
                finding.storedSize = stored.indexedSize
            }
            return try view.head().sequence
        }
        guard finding.problem == nil, let last = expected.keys.max() else { return finding }
        let recomputed = PersonIndexRecomputation()
        func compare() throws {
            for (what, root) in expected[recomputed.size] ?? [] where finding.problem == nil {
                let actual = Hex.encode(try recomputed.root().bytes)
                if root != actual {
                    finding.problem =
                        "\(what) gives the person index over the first \(counted(recomputed.size, "event")) the root \(root); the events give \(actual)"
                }
            }
            guard finding.problem == nil, recomputed.size == finding.storedSize else { return }
            // Unless a checkpoint moved the stored index on meanwhile.
            let difference = try read { view in
                try view.personIndexState()?.indexedSize == recomputed.size ? try recomputed.difference(fromStoredIn: view) : nil
            }
            if let difference {
                finding.problem = "the stored index over the first \(counted(recomputed.size, "event")) differs from the one they give: \(difference)"
            }
        }
        try compare()
        var sizes = expected.keys.filter { $0 > 0 }.sorted()[...]
        do {
            try Ledger.personIndexAdditions(environment: environment, schema: schema, from: 1, through: min(last, head)) { additions, end in
                var rest = additions[...]
                while let size = sizes.first, size <= end {
                    let through = rest.firstIndex { $0.sequence > size } ?? rest.endIndex
                    recomputed.add(Array(rest[..<through]), through: size)
                    rest = rest[through...]
                    sizes.removeFirst()
                    try compare()
                    if finding.problem != nil { throw StopReading() }
                }
                recomputed.add(Array(rest), through: end)
                progress?(end)
            }
        } catch is StopReading {}
        if finding.problem == nil, last > head {
            finding.problem = "the person index is said to cover \(counted(last, "event")), but the log holds \(head)"
        }
        finding.names = recomputed.names
        return finding
    }
}

/// Ends the reading of the log at the first difference found.
private struct StopReading: Error {}

/// What `verify --deep` found of the person index.
public struct PersonIndexFinding: Sendable {
    /// "Person index committed" events checked.
    public var commits = 0
    /// The size the stored index covers; nil when there is none.
    public var storedSize: UInt64?
    /// Names held at the last size checked.
    public var names: UInt64 = 0
    /// What differs; nil when all agree.
    public var problem: String?
}
