import Basics
import Ledger
import LogEngine
import Projections

/// The apply runs a ledger records, read from their events: each run's start, its batches'
/// intents and settlements, and whether it finished.
public struct ApplyHistory: Sendable {
    /// One apply (or undo) run.
    public struct Run: Sendable {
        public var id: String
        public var started: ApplyStarted
        public var startedAt: Timestamp
        public var intents: [Int: ApplyIntended] = [:]
        public var settled: [Int: ApplySettled] = [:]
        /// When each settlement was recorded, by batch.
        public var settledAt: [Int: Timestamp] = [:]
        /// Whether its "run finished" is recorded.
        public var finished = false

        /// The intents no settlement answers yet, by batch: sent, or about to be, when the run stopped.
        public var dangling: [ApplyIntended] { intents.keys.sorted().filter { settled[$0] == nil }.map { intents[$0]! } }

        /// The number the run's next batch takes.
        public var nextBatch: Int { (intents.keys.max() ?? -1) + 1 }

        /// Whether `other` writes to the same table of the same database.
        public func writesSameTable(as other: ApplyStarted) -> Bool {
            started.targetKind == other.targetKind && started.target == other.target && started.table == other.table
        }

        /// The accounts of its committed batches.
        public var settledAccounts: Set<String> {
            Set(settled.values.filter(\.committed).flatMap(\.accountIDs))
        }
    }

    /// Every apply run, in the order they started.
    public var runs: [Run]

    /// The runs `view` records.
    public init(_ view: LogView) throws {
        var runs: [Run] = []
        var index: [String: Int] = [:]
        for sequence in try view.sequences(of: .applyStarted) {
            guard let event = try view.event(sequence), case .applyStarted(let started) = event.body, let id = event.actor.runID else { continue }
            index[id] = runs.count
            runs.append(Run(id: id, started: started, startedAt: event.recordedAt))
        }
        for sequence in try view.sequences(of: .applyIntended) {
            guard let event = try view.event(sequence), case .applyIntended(let intent) = event.body, let i = event.actor.runID.flatMap({ index[$0] })
            else { continue }
            runs[i].intents[intent.batch] = intent
        }
        for sequence in try view.sequences(of: .applySettled) {
            guard let event = try view.event(sequence), case .applySettled(let settlement) = event.body,
                let i = event.actor.runID.flatMap({ index[$0] })
            else { continue }
            runs[i].settled[settlement.batch] = settlement
            runs[i].settledAt[settlement.batch] = event.recordedAt
        }
        for sequence in try view.sequences(of: .runFinished) {
            guard let event = try view.event(sequence), case .runFinished(let finished) = event.body, finished.command == ApplyRun.command,
                let i = event.actor.runID.flatMap({ index[$0] })
            else { continue }
            runs[i].finished = true
        }
        self.runs = runs
    }

    /// Each account's last outcome in each column, and when it was recorded, in the runs that
    /// wrote to the same table as `started`, in the order they started: an undo's `undone`
    /// counts, its other outcomes change nothing.
    public func outcomes(writingSameTableAs started: ApplyStarted) -> [String: PerColumn<AppliedCell>] {
        var found: [String: PerColumn<AppliedCell>] = [:]
        for run in runs where run.writesSameTable(as: started) {
            for batch in run.settled.keys.sorted() {
                guard let settlement = run.settled[batch], settlement.committed, let at = run.settledAt[batch] else { continue }
                for row in settlement.rows {
                    for cell in row.outcomes where !settlement.undo || cell.outcome == .undone {
                        found[row.account, default: PerColumn()][cell.column] = AppliedCell(cell.outcome, at: at)
                    }
                }
            }
        }
        return found
    }

    /// The run with ID `id`.
    public func run(_ id: String) -> Run? { runs.first { $0.id == id } }
}
