import ExitStatuses
import Foundation
import Ledger
import Logging
import Projections

/// `apply`: sets each migrated user's new `sub` on their account in the app's own database,
/// or with ``Options/undo`` restores what one apply run replaced.
///
/// A plan (``plan()``) only reads. A commit (``commit(progress:)``) works in batches: it
/// records each batch's intent in the ledger ("apply intended"), sends it to the database in one
/// transaction with a marker row (``ApplyMarker``), then records what became of each account
/// ("apply settled"). The two stores cannot commit together; a commit stopped anywhere
/// (SIGKILL included) leaves at most two batches intended and not settled, which the next
/// commit settles from the database's markers before it goes on under the same run ID.
public struct ApplyRun: Sendable {
    /// The command name "run finished" records.
    public static let command = "apply"

    /// What the operator asked for.
    public struct Options: Sendable {
        /// The most accounts one transaction changes.
        public var batchSize = 1_000
        /// Only these users (by `account_id`); nil for every migrated user.
        public var accounts: Set<String>?
        /// Only users migrated since the last finished apply run to the same table began.
        public var sinceLast = false
        /// The apply run to undo.
        public var undo: String?

        public init(batchSize: Int = 1_000, accounts: Set<String>? = nil, sinceLast: Bool = false, undo: String? = nil) {
            self.batchSize = batchSize
            self.accounts = accounts
            self.sinceLast = sinceLast
            self.undo = undo
        }
    }

    /// What a commit did.
    public struct Result: Sendable {
        /// The run recorded, nil when there was nothing new to record.
        public var runID: String?
        /// Whether the run continued one stopped before.
        public var resumed = false
        /// Batches of stopped runs settled from the database's markers, and how many of them had committed.
        public var recoveredBatches = 0
        public var recoveredCommitted = 0
        /// Accounts by outcome, this invocation's own batches.
        public var counts: [ApplyOutcome: Int] = [:]
        /// The accounts this invocation did not set (a collision, a change made meanwhile, no
        /// account), with their outcomes: a list as long as the problems, not as the run.
        public var notApplied: [(entry: ApplyPlan.Entry, outcome: ApplyOutcome)] = []

        /// The exit status: failed while an account needs a person (a collision, a change made meanwhile).
        public var exitStatus: ExitStatus { (counts[.collision] ?? 0) + (counts[.changedMeanwhile] ?? 0) > 0 ? .failed : .success }
    }

    public let ledger: Ledger
    public let projection: UserProjection
    /// The table written, and the same table over a second connection of its own for the
    /// plan's reads, so that a batch is read while the one before is written (the same object
    /// where the database gains nothing from it).
    public let table: any AccountsTable
    public let reader: any AccountsTable
    public let options: Options
    public let logger: Logger

    public init(
        ledger: Ledger, projection: UserProjection, table: any AccountsTable, reader: (any AccountsTable)? = nil, options: Options, logger: Logger
    ) {
        self.ledger = ledger
        self.projection = projection
        self.table = table
        self.reader = reader ?? table
        self.options = options
        self.logger = logger
    }

    /// The start this run records: the target, the mapping, the undone run.
    func started(userCount: Int) -> ApplyStarted {
        let m = table.mapping
        return ApplyStarted(
            targetKind: table.targetKind, target: table.targetName, table: m.table.name, keyColumn: m.keyColumn.name, subColumn: m.subColumn.name,
            condition: m.condition, undoOf: options.undo, userCount: userCount, batchSize: options.batchSize)
    }

    // MARK: Planning

    /// What a commit would do now, read without writing anything.
    public func plan() async throws -> ApplyPlan {
        try await ApplyPlan(items: try work(ledger.read { try ApplyHistory($0) }, resuming: nil).allItems(), table: table, batch: options.batchSize)
    }

    /// What the run takes: for an undo, the accounts the undone run changed (and not restored
    /// since); for an apply, the migrated users earlier runs to the same table left undone.
    private func work(_ history: ApplyHistory, resuming run: ApplyHistory.Run?) throws -> ApplyWork {
        ApplyWork(source: try source(history, resuming: run), ledger: ledger, projection: projection, batchSize: options.batchSize)
    }

    /// The users (an apply) or the accounts (an undo) the run takes, from the ledger's apply
    /// history.
    private func source(_ history: ApplyHistory, resuming run: ApplyHistory.Run?) throws -> ApplyWork.Source {
        let done = run?.settledAccounts ?? [:]
        let mine = started(userCount: 0)
        // What earlier runs did to this table's accounts: the ledger's users hold only the
        // last outcome, of whichever table was written last.
        let prior = history.outcomes(writingSameTableAs: mine)
        guard let undo = options.undo else {
            let since =
                options.sinceLast ? history.runs.last { $0.finished && $0.started.undoOf == nil && $0.writesSameTable(as: mine) }?.startedAt : nil
            return .users(ApplyWork.Filter(done: done, prior: prior, since: since, accounts: options.accounts))
        }
        guard let undone = history.run(undo) else { throw ApplyError(.usage, "no apply run \(undo) is recorded in this ledger") }
        guard undone.started.undoOf == nil else { throw ApplyError(.usage, "run \(undo) is itself an undo; apply again instead of undoing it") }
        guard undone.writesSameTable(as: mine) else {
            throw ApplyError(
                .usage,
                "run \(undo) wrote to \(undone.started.table) in \(undone.started.target), not to \(table.mapping.table) in \(table.targetName)")
        }
        // Only accounts whose last outcome on this table is still the run's `applied`.
        var items: [ApplyPlan.Item] = []
        for batch in undone.settled.keys.sorted() {
            guard let settlement = undone.settled[batch], settlement.committed, let intent = undone.intents[batch] else { continue }
            for (i, outcome) in settlement.outcomes.enumerated()
            where outcome == .applied && prior[intent.accountIDs[i]] == .applied && done[intent.accountIDs[i]] == nil {
                guard options.accounts?.contains(intent.accountIDs[i]) ?? true else { continue }
                items.append(ApplyPlan.Item(accountID: intent.accountIDs[i], new: intent.oldValues[i], expected: .some(intent.newValues[i])))
            }
        }
        return .items(items)
    }

    // MARK: Committing

    /// Settles what a stopped run left, then writes, batch by batch, recording each
    /// (``ApplyBatchWriter``), while the next batch's plan is read: the ledger's users, then the
    /// accounts on ``reader``.
    public func commit() async throws -> Result {
        let start = ContinuousClock.now
        let (history, resumed, recovered) = try await settleStoppedRuns()
        let writer = ApplyBatchWriter(self, resuming: resumed)
        writer.result.recoveredBatches = recovered.batches
        writer.result.recoveredCommitted = recovered.committed
        let work = try work(history, resuming: resumed)
        let plan = { @Sendable [reader] (first: UInt64) async throws -> (entries: [ApplyPlan.Entry], next: UInt64?) in
            let page = try work.page(from: first)
            // An outcome on record already (no account, the same collision) is not recorded again.
            let entries = try await ApplyPlan.entries(page.items, table: reader).filter { entry in
                page.recorded[entry.accountID].map { ApplyOutcome(unwritten: entry.outcome) != $0 } ?? true
            }
            return (entries, page.next)
        }
        var next: Task<(entries: [ApplyPlan.Entry], next: UInt64?), Error>? = Task { try await plan(0) }
        do {
            while let reading = next {
                let (entries, after) = try await reading.value
                next = after.map { first in Task { try await plan(first) } }
                guard !entries.isEmpty else { continue }
                try await writer.write(entries, userCount: work.count)
            }
            try await writer.settleWriting()
        } catch {
            // Nothing is left running; what the database answered is recorded before the run stops.
            _ = try? await next?.value
            await writer.abandon()
            throw error
        }
        try await writer.finish(since: start)
        return writer.result
    }

    /// Each of `intent`'s accounts' outcome: the written ones' in order (for an undo, a value
    /// written back is `undone`), the others' as planned.
    static func outcomes(of intent: ApplyIntended, written: [ApplyOutcome], undo: Bool) -> [ApplyOutcome] {
        var next = written.makeIterator()
        return intent.planned.map { planned in
            let outcome = ApplyOutcome(unwritten: planned) ?? next.next() ?? .changedMeanwhile
            return undo && outcome == .applied ? .undone : outcome
        }
    }

    /// Settles, from the database's markers, the batches stopped runs to this table left
    /// intended, and finds the run this commit continues: the last unfinished one to this table,
    /// which must have been started with the same mapping and undo. Returns the ledger's apply
    /// history with those settlements in it, read once for the whole commit.
    private func settleStoppedRuns() async throws -> (ApplyHistory, ApplyHistory.Run?, (batches: Int, committed: Int)) {
        var history = try ledger.read { try ApplyHistory($0) }
        let mine = started(userCount: 0)
        var recovered = (batches: 0, committed: 0)
        var resumed: ApplyHistory.Run?
        for (index, var run) in history.runs.enumerated() where !run.finished && run.writesSameTable(as: mine) {
            let dangling = run.dangling
            if !dangling.isEmpty {
                let markers = Dictionary(try await table.committedBatches(of: run.id).map { ($0.batch, $0) }, uniquingKeysWith: { a, _ in a })
                for intent in dangling {
                    let digest = intent.sha256
                    var outcomes: [ApplyOutcome]?
                    if let marker = markers[intent.batch] {
                        guard marker.intentSHA256 == digest, marker.outcomes.count == intent.planned.filter({ $0 == .change }).count else {
                            throw ApplyError(
                                .target,
                                "\(table.targetName): the marker of run \(run.id) batch \(intent.batch) does not match the intent the ledger recorded"
                            )
                        }
                        outcomes = Self.outcomes(of: intent, written: marker.outcomes, undo: run.started.undoOf != nil)
                        recovered.committed += 1
                    }
                    let settlement = ApplySettled(
                        batch: intent.batch, intentSHA256: digest, committed: outcomes != nil, recovered: true, undo: run.started.undoOf != nil,
                        accountIDs: intent.accountIDs, outcomes: outcomes ?? [], salts: intent.accountIDs.map { _ in RowTree.newSalt() })
                    recovered.batches += 1
                    _ = try await ledger.append(
                        EventDraft(
                            .applySettled(settlement), idempotencyKey: ApplySettled.idempotencyKey(run: run.id, batch: intent.batch), runID: run.id))
                    logger.info(
                        "apply batch settled from its marker",
                        metadata: ["run": "\(run.id)", "batch": "\(intent.batch)", "committed": "\(settlement.committed)"])
                    run.settled[intent.batch] = settlement
                }
            }
            history.runs[index] = run
            resumed = run
        }
        if let resumed {
            let theirs = resumed.started
            guard theirs.keyColumn == mine.keyColumn, theirs.subColumn == mine.subColumn, theirs.condition == mine.condition,
                theirs.undoOf == mine.undoOf
            else {
                throw ApplyError(
                    .usage,
                    "apply run \(resumed.id) to \(theirs.table) was stopped before it finished, with "
                        + "--key account_id=\(theirs.keyColumn) --set recipient_sub=\(theirs.subColumn)"
                        + (theirs.condition.map { " --where \"\($0)\"" } ?? "") + (theirs.undoOf.map { " --undo \($0)" } ?? "")
                        + ": run it again with those options to finish it")
            }
        }
        return (history, resumed, recovered)
    }
}
