import Basics
import LMDB

extension Ledger {
    /// `verify --deep`'s check of the person index: recomputes it from the events alone and
    /// compares the root every "person index committed" event holds, and the stored index's,
    /// with the root over as many events. Returns what differs first; nil when all agree (or the
    /// ledger has neither commits nor an index yet). Reads in short read transactions.
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
        }
        try compare()
        var next: UInt64 = 1
        while next <= min(last, head), finding.problem == nil {
            let end = min(min(last, head), next + Ledger.eventsPerBackgroundTransaction - 1)
            try read { view in
                for sequence in next...end where finding.problem == nil {
                    guard let raw = try view.record(sequence) else {
                        throw LedgerError(.malformedRecord, "event \(sequence) is missing from the log")
                    }
                    recomputed.add(try view.withStoredRows(LogView.decode(raw, sequence: sequence)), leaf: MerkleHash.leafHash(storedRecord: raw))
                    try compare()
                    if sequence == finding.storedSize, finding.problem == nil, let difference = try recomputed.difference(fromStoredIn: view) {
                        finding.problem =
                            "the stored index over the first \(counted(sequence, "event")) differs from the one they give: \(difference)"
                    }
                }
            }
            progress?(end)
            next = end + 1
        }
        if finding.problem == nil, last > head {
            finding.problem = "the person index is said to cover \(counted(last, "event")), but the log holds \(head)"
        }
        finding.names = recomputed.names
        return finding
    }
}

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
