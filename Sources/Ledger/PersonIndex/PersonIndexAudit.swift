import Basics
import LMDB
import LogEngine
import Synchronization

/// `verify --deep`'s check of the person index: recomputes it from the events alone and
/// compares the root every "person index committed" event holds, and the stored index's, with
/// the root over as many events; the stored index's records are compared too.
///
/// It shares another reading of the log (the projections' deep check) so that the log is read
/// and decoded once for both: ``feed(_:from:)``, on the thread that reads, takes what the events
/// add to the index; ``catchUp()``, on the thread that folds, adds it to the tree and compares
/// wherever a root is expected; ``finish()`` says what was found.
public final class PersonIndexAudit: Sendable {
    private struct Check {
        var finding = PersonIndexFinding()
        var recomputed = PersonIndexRecomputation()
        /// What reading the log failed with, said by ``finish()``.
        var failure: (any Error)?
    }

    private let environment: Environment
    private let schema: LedgerSchema
    /// The roots to compare, by the size they cover: each commit's, and the stored index's.
    private let expected: [UInt64: [(what: String, root: String)]]
    private let sizes: [UInt64]
    /// What the events read so far add, not yet in the tree, and the last event they cover.
    private let fed = Mutex<(additions: [PrefixTree.Addition], through: UInt64)>(([], 0))
    private let check: Mutex<Check>

    /// Reads what `ledger` committed and stores of its index.
    public init(_ ledger: Ledger) throws {
        environment = ledger.environment
        schema = ledger.schema
        var check = Check()
        var expected: [UInt64: [(what: String, root: String)]] = [:]
        try ledger.read { view in
            for sequence in try view.sequences(of: .personIndexCommitted) {
                guard case .personIndexCommitted(let body) = try view.eventAsLogged(sequence)?.body else { continue }
                guard UInt64(body.indexedSize) < sequence else {
                    check.finding.problem = "event \(sequence) commits the person index over \(body.indexedSize) events, not all before it"
                    return
                }
                expected[UInt64(body.indexedSize), default: []].append(("event \(sequence)", body.root))
                check.finding.commits += 1
            }
            if let stored = try view.personIndexState() {
                expected[stored.indexedSize, default: []].append(("the stored index", Hex.encode(stored.root.bytes)))
                check.finding.storedSize = stored.indexedSize
            }
        }
        self.expected = check.finding.problem == nil ? expected : [:]
        sizes = self.expected.keys.sorted()
        self.check = Mutex(check)
        // The roots over no event, if any.
        self.check.withLock { check in
            do { try compare(&check) } catch { check.failure = error }
        }
    }

    /// Takes what `events`, the next in the log as `view` holds them (rows not attached), add
    /// to the index, as far as the last size a root is expected at.
    public func feed(_ events: [RecordedEvent], from view: LogView) throws {
        guard let lastExpected = sizes.last, let first = events.first?.sequence, first <= lastExpected else { return }
        var additions: [PrefixTree.Addition] = []
        for event in events where event.sequence <= lastExpected {
            additions += try view.personIndexEntries(of: event).map(PrefixTree.Addition.init)
        }
        let through = min(events.last!.sequence, lastExpected)
        fed.withLock {
            $0.additions += additions
            $0.through = through
        }
    }

    /// Adds what was fed to the tree, comparing the roots expected on the way.
    public func catchUp() {
        let (additions, through) = fed.withLock { fed in
            defer { fed.additions = [] }
            return (fed.additions, fed.through)
        }
        check.withLock { check in
            guard check.finding.problem == nil, check.failure == nil else { return }
            do {
                var rest = additions[...]
                for size in sizes where size > check.recomputed.size && size <= through {
                    let upTo = rest.firstIndex { $0.sequence > size } ?? rest.endIndex
                    try check.recomputed.add(Array(rest[..<upTo]), through: size)
                    rest = rest[upTo...]
                    try compare(&check)
                    if check.finding.problem != nil { return }
                }
                try check.recomputed.add(Array(rest), through: max(through, check.recomputed.size))
            } catch {
                check.failure = error
            }
        }
    }

    /// What was found, once every event was fed.
    public func finish() throws -> PersonIndexFinding {
        catchUp()
        return try check.withLock { check in
            if let failure = check.failure { throw failure }
            if check.finding.problem == nil, let last = sizes.last, last > check.recomputed.size {
                check.finding.problem = "the person index is said to cover \(counted(last, "event")), but the log holds \(check.recomputed.size)"
            }
            _ = try check.recomputed.root()
            check.finding.names = check.recomputed.names
            return check.finding
        }
    }

    /// Compares the roots expected over as many events as were added, and the stored index's
    /// records when it covers that many.
    private func compare(_ check: inout Check) throws {
        let size = check.recomputed.size
        for (what, root) in expected[size] ?? [] where check.finding.problem == nil {
            let actual = Hex.encode(try check.recomputed.root().bytes)
            if root != actual {
                check.finding.problem =
                    "\(what) gives the person index over the first \(counted(size, "event")) the root \(root); the events give \(actual)"
            }
        }
        guard check.finding.problem == nil, size == check.finding.storedSize else { return }
        // Unless a checkpoint moved the stored index on meanwhile.
        let recomputed = check.recomputed
        let difference = try environment.read { txn in
            let view = LogView(txn, schema: schema)
            return try view.personIndexState()?.indexedSize == size ? try recomputed.difference(fromStoredIn: view) : nil
        }
        if let difference {
            check.finding.problem = "the stored index over the first \(counted(size, "event")) differs from the one they give: \(difference)"
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
