import Foundation
import Ledger
import LogEngine
import Logging

/// The writing half of an apply commit, batch by batch: records each batch's intent (with the
/// run's start before the first, and the settlement of the batch before), sends the batch to
/// the table while the next one is planned, and settles it once the table answers.
///
/// At any moment at most two batches are intended and not settled: one being written, one about
/// to be. Each settlement is recorded with a later intent (or the run's end), in one append.
final class ApplyBatchWriter {
    private let run: ApplyRun
    /// The run's ID: the resumed run's, or one made when the first batch is intended.
    private(set) var runID: String?
    private var nextBatch: Int
    /// Events made and not yet appended: the run's start, settlements.
    private var unsettled: [EventDraft] = []
    /// The batch the table is writing.
    private var writing: (intent: ApplyIntended, entries: [ApplyPlan.Entry], write: Task<[ApplyOutcome], Error>)?
    var result = ApplyRun.Result()
    /// The run's lock (``RunLock``), held from its start, or from its resumption, to its end.
    private var lock: RunLock?

    /// `lock` is the resumed run's, taken before its stopped batches were settled.
    init(_ run: ApplyRun, resuming resumed: ApplyHistory.Run?, lock: RunLock?) {
        self.run = run
        self.lock = lock
        runID = resumed?.id
        nextBatch = resumed?.nextBatch ?? 0
        result.resumed = resumed != nil
        result.runID = runID
    }

    /// Records `entries` as the next batch's intent, waits for the batch before to be written
    /// and settles it, then starts writing this one. `userCount` is asked for only when the run
    /// starts here.
    func write(_ batch: Recordable, userCount: () throws -> Int) async throws {
        let (entries, rows) = (batch.entries, batch.rows)
        guard !rows.isEmpty else { return }
        let runID = try startIfNeeded(userCount: userCount)
        var holderSalts: [ApplyIntended.CellIndex: [UInt8]] = [:]
        for (i, row) in rows.enumerated() {
            for cell in row.cells where cell.planned == .collision {
                holderSalts[ApplyIntended.CellIndex(row: i, column: cell.column)] = RowTree.newSalt()
            }
        }
        let intent = ApplyIntended(batch: nextBatch, rows: rows, salts: RowTree.newSalts(rows.count), holderSalts: holderSalts)
        nextBatch += 1
        let intended = EventDraft(.applyIntended(intent), idempotencyKey: ApplyIntended.idempotencyKey(run: runID, batch: intent.batch), runID: runID)
        _ = try await run.ledger.append(contentsOf: unsettled + [intended])
        unsettled = []
        // One batch is written at a time: the one before ends first.
        try await settleWriting()
        let changes = ApplyPlan(entries: entries).changes
        let marker = ApplyMarker(run: runID, batch: intent.batch, intentSHA256: intent.sha256)
        writing = (intent, entries, Task { [table = run.table] in try await table.write(changes, marker: marker) })
    }

    /// Waits for the batch being written, if any, and settles it.
    func settleWriting() async throws {
        guard let previous = writing else { return }
        writing = nil
        settle(previous.intent, previous.entries, try await previous.write.value)
    }

    /// After a failure: what the table answered for the batch it was writing is settled, and
    /// what is unsettled is recorded, as far as the ledger takes it (at worst, a rerun learns it
    /// from the markers).
    func abandon() async {
        if let previous = writing, let written = try? await previous.write.value { settle(previous.intent, previous.entries, written) }
        writing = nil
        if !unsettled.isEmpty { _ = try? await run.ledger.append(contentsOf: unsettled) }
    }

    /// Records "run finished" (with what is unsettled) when the run was recorded at all.
    func finish(since start: ContinuousClock.Instant) async throws {
        guard let runID else { return }
        // The recipient_sub column's outcomes by name (as runs that set no other column record
        // them), another column's as COLUMN.OUTCOME.
        var counts: [String: Int] = [:]
        for (column, outcomes) in result.counts {
            for (outcome, n) in outcomes { counts[(column == .recipientSub ? "" : column.rawValue + ".") + outcome.rawValue] = n }
        }
        let finished = RunFinished(
            command: ApplyRun.command, counts: counts, durationMilliseconds: Int((ContinuousClock.now - start).inSeconds * 1000),
            exitStatus: Int(result.exitStatus.rawValue))
        _ = try await run.ledger.append(contentsOf: unsettled + [EventDraft(.runFinished(finished), runID: runID)])
        unsettled = []
        lock?.release()
    }

    /// The run's ID, its "apply started" made when this is its first batch.
    private func startIfNeeded(userCount: () throws -> Int) throws -> String {
        if let runID { return runID }
        let id = UUID().uuidString.lowercased()
        let users = try userCount()
        lock = try RunLock(id, in: run.ledger.directory, holder: RunLock.Holder(host: run.ledger.actor.host, attempting: users))
        unsettled.append(EventDraft(.applyStarted(run.started(userCount: users)), idempotencyKey: ApplyStarted.idempotencyKey(run: id), runID: id))
        runID = id
        result.runID = id
        return id
    }

    /// The settlement of a written batch, recorded with the next append; its outcomes counted.
    private func settle(_ intent: ApplyIntended, _ entries: [ApplyPlan.Entry], _ written: [ApplyOutcome]) {
        guard let runID else { return }
        let undo = run.options.undo != nil
        let rows = ApplyRun.outcomes(of: intent, written: written, undo: undo)
        let settled = ApplySettled(
            batch: intent.batch, intentSHA256: intent.sha256, committed: true, recovered: false, undo: undo, rows: rows,
            salts: RowTree.newSalts(rows.count))
        unsettled.append(
            EventDraft(.applySettled(settled), idempotencyKey: ApplySettled.idempotencyKey(run: runID, batch: intent.batch), runID: runID))
        for (entry, row) in zip(entries, rows) {
            for cell in row.outcomes {
                result.counts[cell.column, default: [:]][cell.outcome, default: 0] += 1
                if ![.applied, .already, .undone].contains(cell.outcome) { result.notApplied.append((entry, cell.column, cell.outcome)) }
            }
        }
        run.logger.debug("apply batch written", metadata: ["run": "\(runID)", "batch": "\(intent.batch)", "accounts": "\(entries.count)"])
    }
}
