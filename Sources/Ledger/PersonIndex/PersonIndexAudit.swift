import Basics
import LMDB
import Synchronization

/// `verify --deep`'s check of the person index: recomputes it from the events alone and
/// compares the root every "person index committed" event holds, and the stored index's, with
/// the root over as many events; the stored index's records are compared too.
///
/// It is fed the events as another reading of the log decodes them (the projections' deep
/// check), in order, so that the log is read and decoded once for both. Feeding may happen on
/// another thread than the one that made it.
public final class PersonIndexAudit: Sendable {
    private struct Progress {
        var finding = PersonIndexFinding()
        /// The sizes to compare at: each commit's, and the stored index's, with what gives them.
        var expected: [UInt64: [(what: String, root: String)]] = [:]
        var recomputed = PersonIndexRecomputation()
        var head: UInt64 = 0
    }

    private let environment: Environment
    private let schema: LedgerSchema
    private let progress: Mutex<Progress>

    /// Reads what `ledger` committed and stores of its index.
    public init(_ ledger: Ledger) throws {
        environment = ledger.environment
        schema = ledger.schema
        var progress = Progress()
        try ledger.read { view in
            for sequence in try view.sequences(of: .personIndexCommitted) {
                guard case .personIndexCommitted(let body) = try view.eventAsLogged(sequence)?.body else { continue }
                guard UInt64(body.indexedSize) < sequence else {
                    progress.finding.problem = "event \(sequence) commits the person index over \(body.indexedSize) events, not all before it"
                    return
                }
                progress.expected[UInt64(body.indexedSize), default: []].append(("event \(sequence)", body.root))
                progress.finding.commits += 1
            }
            if let stored = try view.personIndexState() {
                progress.expected[stored.indexedSize, default: []].append(("the stored index", Hex.encode(stored.root.bytes)))
                progress.finding.storedSize = stored.indexedSize
            }
            progress.head = try view.head().sequence
        }
        if progress.finding.problem == nil { try Self.compare(&progress, environment: environment, schema: schema) }
        self.progress = Mutex(progress)
    }

    /// Adds `events`, the next in the log (as `view` holds them, rows not yet attached), and
    /// compares wherever a root is expected among them.
    public func feed(_ events: [RecordedEvent], from view: LogView) throws {
        try progress.withLock { progress in
            guard progress.finding.problem == nil, let last = events.last?.sequence, last > progress.recomputed.size,
                progress.expected.keys.contains(where: { $0 > progress.recomputed.size })
            else { return }
            var additions: [PrefixTree.Addition] = []
            for event in events where event.sequence > progress.recomputed.size {
                guard let raw = try view.record(event.sequence) else {
                    throw LedgerError(.malformedRecord, "event \(event.sequence) is missing from the log")
                }
                let entries = PersonIndexEntry.entries(of: try view.withStoredRows(event), leaf: MerkleHash.leafHash(storedRecord: raw))
                additions += entries.map(PrefixTree.Addition.init)
                if progress.expected[event.sequence] != nil {
                    progress.recomputed.add(additions, through: event.sequence)
                    additions = []
                    try Self.compare(&progress, environment: environment, schema: schema)
                    if progress.finding.problem != nil { return }
                }
            }
            progress.recomputed.add(additions, through: last)
        }
    }

    /// What was found, once every event was fed.
    public func finish() throws -> PersonIndexFinding {
        try progress.withLock { progress in
            if progress.finding.problem == nil, let last = progress.expected.keys.max(), last > progress.recomputed.size {
                progress.finding.problem =
                    "the person index is said to cover \(counted(last, "event")), but the log holds \(progress.recomputed.size)"
            }
            _ = try progress.recomputed.root()
            progress.finding.names = progress.recomputed.names
            return progress.finding
        }
    }

    /// Compares the roots expected over as many events as were fed, and the stored index's
    /// records when it covers that many.
    private static func compare(_ progress: inout Progress, environment: Environment, schema: LedgerSchema) throws {
        let size = progress.recomputed.size
        for (what, root) in progress.expected[size] ?? [] where progress.finding.problem == nil {
            let actual = Hex.encode(try progress.recomputed.root().bytes)
            if root != actual {
                progress.finding.problem =
                    "\(what) gives the person index over the first \(counted(size, "event")) the root \(root); the events give \(actual)"
            }
        }
        guard progress.finding.problem == nil, size == progress.finding.storedSize else { return }
        // Unless a checkpoint moved the stored index on meanwhile.
        let recomputed = progress.recomputed
        let difference = try environment.read { txn in
            let view = LogView(txn, schema: schema)
            return try view.personIndexState()?.indexedSize == size ? try recomputed.difference(fromStoredIn: view) : nil
        }
        if let difference {
            progress.finding.problem = "the stored index over the first \(counted(size, "event")) differs from the one they give: \(difference)"
        }
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
