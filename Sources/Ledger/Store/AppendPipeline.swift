import Foundation
import LMDB

/// How the ledger's appends are written: each batch is prepared (its log writes by
/// ``PendingLog``, each folder's by its ``SpeculativeFold``) on the writer's taking thread while the
/// batch before it commits, then applied in one transaction on the committing thread.
///
/// A prepared batch holds only while the log and the folders are, in its transaction, as it
/// was prepared over (the head it follows, each folder's check). When they are not (another
/// process appended, a rebuild switched the projections, the batch before it failed), the
/// commit writes the batch as before the pipeline: the log's writes worked out inside the
/// transaction, every folder catching up and folding there. The next batch is then prepared
/// afresh, once nothing is in flight. Every guarantee of the
/// transaction is kept: the transaction decides what is written.
final class AppendPipeline: @unchecked Sendable {
    /// A group commit's writes, worked out before its transaction.
    struct Prepared: Sendable {
        /// The head the batch follows: its writes hold only while the log still ends there.
        let base: ChainHead
        var writes: WriteBatch
        var appended: PendingLog.Appended
        /// The folders' checks, made in the commit's transaction before the writes are applied.
        var checks: [@Sendable (ReadTransaction) throws -> Bool]
    }

    private let environment: Environment
    private let schema: LedgerSchema
    private let actor: Actor
    private let folders: [any LedgerFolder]
    /// Whether each folder folds ahead of the transaction (the others fold inside it).
    private let foldsAhead: [Bool]

    // The taking thread's, between batches.
    private var pending: PendingLog?
    private var aheads: [any SpeculativeFold] = []

    // Shared by both threads, under `condition`.
    private let condition = NSCondition()
    /// Batches prepared (or not) and not yet committed.
    private var inFlight = 0
    /// The last event committed as prepared.
    private var landed: UInt64 = 0
    /// A batch was not committed as prepared: what the taking thread holds may be wrong.
    private var stale = false

    init(environment: Environment, schema: LedgerSchema, actor: Actor, folders: [any LedgerFolder]) {
        self.environment = environment
        self.schema = schema
        self.actor = actor
        self.folders = folders
        self.foldsAhead = folders.map { $0.makeSpeculativeFold() != nil }
    }

    /// Works out `events`' writes over the batches prepared before, reading what is
    /// committed; nil when they cannot be (the commit then works them out in its transaction).
    /// Called by the taking thread, once per batch or part of one (``merge(_:_:)``).
    func prepare(_ events: some Sequence<PreparedEvent>) -> Prepared? {
        condition.lock()
        if stale {
            while inFlight > 0 { condition.wait() }
            pending = nil
            stale = false
        }
        let landed = self.landed
        inFlight += 1
        condition.unlock()
        pending?.forget(through: landed)
        for ahead in aheads { ahead.forget(through: landed) }
        do {
            let prepared = try environment.read { txn in
                let view = LogView(txn, schema: schema)
                if pending == nil {
                    pending = try PendingLog(reading: view)
                    aheads = folders.compactMap { $0.makeSpeculativeFold() }
                }
                return try prepare(events, over: &pending!, folding: aheads, view: view)
            }
            if prepared == nil { startAfresh() }
            return prepared
        } catch {
            // The commit prepares the batch again in its transaction, and meets the error there.
            startAfresh()
            return nil
        }
    }

    /// Once the batches in flight are committed, the next batch is prepared over what is
    /// committed then, not over what this thread holds.
    private func startAfresh() {
        condition.lock()
        stale = true
        condition.unlock()
    }

    /// Makes `first` one batch with `second`, prepared after it (nil when either was not
    /// prepared). Called by the taking thread.
    func merge(_ first: inout Prepared?, _ second: Prepared?) {
        condition.lock()
        inFlight -= 1
        condition.unlock()
        guard var merged = first.take(), let second else { return }
        // The folders' checks are those of the first part that folded anything: the second
        // part's expect the first committed.
        if merged.appended.recorded.isEmpty { merged.checks = second.checks }
        merged.writes.append(second.writes)
        merged.appended.outcomes += second.appended.outcomes
        merged.appended.recorded += second.appended.recorded
        first = merged
    }

    /// Writes `events` in one transaction: `prepared`'s writes when they still hold, or
    /// writes worked out inside the transaction. Called by the committing thread.
    func commit(_ events: some Sequence<PreparedEvent>, prepared: Prepared?) throws -> [AppendOutcome] {
        var landed: UInt64?
        defer {
            condition.lock()
            inFlight -= 1
            if let landed { self.landed = max(self.landed, landed) } else { stale = true }
            condition.broadcast()
            condition.unlock()
        }
        let (outcomes, landedThrough) = try environment.write { txn -> (outcomes: [AppendOutcome], landed: UInt64?) in
            let view = LogView(txn, schema: schema)
            let head = try view.head()
            if let prepared, prepared.base == head, try prepared.checks.allSatisfy({ try $0(txn) }) {
                try prepared.writes.apply(to: txn)
                try fold(prepared.appended.recorded, in: txn, skippingFoldsAhead: true)
                return (prepared.appended.outcomes, prepared.appended.recorded.last?.sequence ?? head.sequence)
            }
            // As before pipelining: the log's writes worked out here, every folder folding in
            // the transaction.
            var log = try PendingLog(reading: view)
            var writes = WriteBatch()
            let appended = try log.append(events, actor: actor, view: view, into: &writes)
            try writes.apply(to: txn)
            try fold(appended.recorded, in: txn, skippingFoldsAhead: false)
            return (appended.outcomes, nil)
        }
        landed = landedThrough
        return outcomes
    }

    /// Folds `recorded` into each folder inside `transaction`, after the events it missed
    /// (appended by a process without it); the folders that folded them ahead are skipped
    /// when `skippingFoldsAhead`.
    private func fold(_ recorded: [RecordedEvent], in transaction: WriteTransaction, skippingFoldsAhead: Bool) throws {
        guard let first = recorded.first?.sequence else { return }
        for (folder, ahead) in zip(folders, foldsAhead) where !(ahead && skippingFoldsAhead) {
            try Ledger.catchUp(folder, through: first - 1, in: transaction, schema: schema)
            try folder.fold(recorded, in: transaction)
        }
    }

    /// `events` appended to `log` and folded by `aheads`, or nil when a folder cannot fold
    /// them ahead of the transaction. `log` is changed only when the batch is prepared.
    private func prepare(
        _ events: some Sequence<PreparedEvent>, over log: inout PendingLog, folding aheads: [any SpeculativeFold], view: LogView
    ) throws -> Prepared? {
        var after = log
        var writes = WriteBatch()
        let base = log.head
        let appended = try after.append(events, actor: actor, view: view, into: &writes)
        var checks: [@Sendable (ReadTransaction) throws -> Bool] = []
        if !appended.recorded.isEmpty {
            for ahead in aheads {
                guard let check = try ahead.fold(appended.recorded, after: base.sequence, reading: view.transaction, into: &writes) else {
                    return nil
                }
                checks.append(check)
            }
        }
        log = after
        return Prepared(base: base, writes: writes, appended: appended, checks: checks)
    }
}
