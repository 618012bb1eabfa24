import Basics
import ExitStatuses
import Foundation
import Ledger
import LogEngine
import Logging
import Projections

/// `apply`: sets each migrated user's new values on their account in the app's own database
/// (the `sub`, and where mapped the private relay address and the forwarding flag), or with
/// ``Options/undo`` restores what one apply run replaced.
///
/// A plan (``plan()``) only reads. A commit (``commit()``) works in batches: it records each
/// batch's intent in the ledger ("apply intended"), sends it to the database in one transaction
/// with a marker row (``ApplyMarker``), then records what became of each cell ("apply
/// settled"). The two stores cannot commit together; a commit stopped anywhere (SIGKILL
/// included) leaves at most two batches intended and not settled, which the next commit settles
/// from the database's markers before it goes on under the same run ID.
public struct ApplyRun: Sendable {
    /// The command name "run finished" records.
    public static let command = "apply"

    /// What the operator asked for.
    public struct Options: Sendable {
        /// The most accounts one transaction changes.
        public var batchSize = 1_000
        /// Only these users (by `account_id`); nil for every migrated user.
        public var accounts: Set<String>?
        /// For each column, only users migrated, or whose value in it was recorded, since the
        /// last finished apply run to the same table that set it began.
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
        /// Cells by column and outcome, this invocation's own batches.
        public var counts: [ApplyColumn: [ApplyOutcome: Int]] = [:]
        /// The cells this invocation did not set (a collision, a change made meanwhile, no
        /// account, an address of the user's own kept), with their outcomes: a list as long as
        /// the problems, not as the run.
        public var notApplied: [(entry: ApplyPlan.Entry, column: ApplyColumn, outcome: ApplyOutcome)] = []
        /// The accounts whose email column holds a relay address no cell replaces.
        public var staleAddresses: [StaleAddress] = []
        /// For an undo: the accounts whose addresses cannot be opened any more (the user was
        /// erased since): their email is not restored.
        public var erasedSince: [String] = []

        /// How many cells of all columns have `outcome`.
        public func count(_ outcome: ApplyOutcome) -> Int { counts.values.reduce(0) { $0 + ($1[outcome] ?? 0) } }

        /// The exit status: failed while a cell needs a person (a collision, a change made meanwhile).
        public var exitStatus: ExitStatus { count(.collision) + count(.changedMeanwhile) > 0 ? .failed : .success }
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
            targetKind: table.targetKind, target: table.targetName, table: m.table.name, keyColumn: m.keyColumn.name,
            columns: PerColumn(
                recipientSub: m.columns.recipientSub?.name, email: m.columns.email?.name, emailForwarding: m.columns.emailForwarding?.name),
            condition: m.condition, undoOf: options.undo, userCount: userCount, batchSize: options.batchSize,
            accountsSHA256: options.accounts.map(Self.digest), sinceLast: options.sinceLast)
    }

    /// SHA-256 (hex) of `accounts`, sorted, each followed by a line feed: how a start records
    /// the `--users` list that limited it, however the list was written.
    static func digest(_ accounts: Set<String>) -> String {
        let bytes = Array(accounts.sorted().map { $0 + "\n" }.joined().utf8)
        return Hex.encode(bytes.withUnsafeBytes { SHA256Hash(hashing: UnsafeRawBufferPointer(start: nil, count: 0), $0) }.bytes)
    }

    // MARK: Planning

    /// What a commit would do now, read without writing anything.
    public func plan() async throws -> ApplyPlan {
        let (work, erasedSince) = try work(ledger.read { try ApplyHistory($0) }, resuming: nil)
        let (items, candidates) = try work.allPages()
        var plan = try await ApplyPlan(items: items, table: table, batch: options.batchSize)
        for start in stride(from: 0, to: candidates.count, by: options.batchSize) {
            plan.staleAddresses += try await ApplyPlan.staleAddresses(
                Array(candidates[start..<min(start + options.batchSize, candidates.count)]), table: table)
        }
        plan.erasedSince = erasedSince
        return plan
    }

    /// What the run takes: for an undo, the accounts the undone run changed (and not restored
    /// since), with those whose addresses no longer open; for an apply, the migrated users whose
    /// columns earlier runs to the same table left undone.
    private func work(_ history: ApplyHistory, resuming run: ApplyHistory.Run?) throws -> (ApplyWork, erasedSince: [String]) {
        let (source, erased) = try source(history, resuming: run)
        return (ApplyWork(source: source, ledger: ledger, projection: projection, batchSize: options.batchSize), erased)
    }

    /// The users (an apply) or the accounts (an undo) the run takes, from the ledger's apply
    /// history.
    private func source(_ history: ApplyHistory, resuming run: ApplyHistory.Run?) throws -> (ApplyWork.Source, erasedSince: [String]) {
        let done = run?.settledAccounts ?? []
        let mine = started(userCount: 0)
        // What earlier runs did to this table's accounts: the ledger's users hold only the
        // last outcome, of whichever table was written last.
        let prior = history.outcomes(writingSameTableAs: mine)
        let columns = table.mapping.mapped.map(\.value)
        guard let undo = options.undo else {
            var since = PerColumn<Timestamp>()
            if options.sinceLast {
                for column in columns {
                    since[column] =
                        history.runs.last {
                            $0.finished && $0.started.undoOf == nil && $0.writesSameTable(as: mine) && $0.started.columns[column] != nil
                        }?
                        .startedAt
                }
            }
            let filter = ApplyWork.Filter(
                columns: columns, done: done, prior: prior, since: since, accounts: options.accounts,
                flags: (table.flagText(true), table.flagText(false)))
            return (.users(filter), [])
        }
        guard let undone = history.run(undo) else { throw ApplyError(.usage, "no apply run \(undo) is recorded in this ledger") }
        guard undone.started.undoOf == nil else { throw ApplyError(.usage, "run \(undo) is itself an undo; apply again instead of undoing it") }
        guard undone.writesSameTable(as: mine), undone.started.columns == mine.columns else {
            throw ApplyError(
                .usage,
                "run \(undo) wrote to \(undone.started.table) in \(undone.started.target) with "
                    + undone.started.mapped.map { "--set \($0.value.rawValue)=\($0.column)" }.joined(separator: " ")
                    + ": undo it with that table and those --set options")
        }
        return try undoItems(of: undone, prior: prior, done: done)
    }

    /// The accounts `undone` changed whose last outcome on this table is still its `applied`,
    /// each cell to take back the value the run read; an email cell's addresses opened, and the
    /// accounts whose addresses no longer open (erased since) listed instead.
    private func undoItems(
        of undone: ApplyHistory.Run, prior: [String: PerColumn<AppliedCell>], done: Set<String>
    ) throws -> (
        ApplyWork.Source, erasedSince: [String]
    ) {
        var found: [(account: String, cells: [ApplyCell])] = []
        for batch in undone.settled.keys.sorted() {
            guard let settlement = undone.settled[batch], settlement.committed, let intent = undone.intents[batch] else { continue }
            for (i, row) in settlement.rows.enumerated() where i < intent.rows.count && !done.contains(row.account) {
                guard options.accounts?.contains(row.account) ?? true else { continue }
                let cells = row.outcomes.compactMap { cell -> ApplyCell? in
                    guard cell.outcome == .applied, prior[row.account]?[cell.column]?.outcome == .applied else { return nil }
                    return intent.rows[i].cell(cell.column)
                }
                if !cells.isEmpty { found.append((row.account, cells)) }
            }
        }
        let sealer = ledger.sealer
        let keys = try sealer.keys(
            for: found.flatMap { $0.cells.flatMap { [$0.old, $0.new].compactMap { if case .sealed(let s)? = $0 { s } else { nil } } } })
        func opened(_ value: ApplyValue?) throws -> String?? {
            switch value {
            case nil: return .some(nil)
            case .text(let text)?: return .some(text)
            case .sealed(let sealed)?: return try sealer.open(sealed, with: keys).map { .some($0) }
            }
        }
        var items: [ApplyPlan.Item] = []
        var erased: [String] = []
        for (account, cells) in found {
            var item = ApplyPlan.Item(accountID: account, cells: [])
            for cell in cells {
                guard let old = try opened(cell.old), let new = try opened(cell.new) else {
                    erased.append(account)
                    continue
                }
                item.cells.append(ApplyPlan.Item.Cell(column: cell.column, new: old, expected: .some(new)))
                if case .sealed(let sealed)? = cell.new { item.keyID = sealed.keyID }
            }
            if !item.cells.isEmpty { items.append(item) }
        }
        return (.items(items), erased)
    }

    // MARK: Committing

    /// Settles what a stopped run left, then writes, batch by batch, recording each
    /// (``ApplyBatchWriter``), while the next batch's plan is read: the ledger's users, then the
    /// accounts on ``reader``.
    public func commit() async throws -> Result {
        let start = ContinuousClock.now
        let (history, resumed, recovered, lock) = try await settleStoppedRuns()
        let writer = ApplyBatchWriter(self, resuming: resumed, lock: lock)
        writer.result.recoveredBatches = recovered.batches
        writer.result.recoveredCommitted = recovered.committed
        let (work, erasedSince) = try work(history, resuming: resumed)
        writer.result.erasedSince = erasedSince
        typealias Planned = (batch: ApplyBatchWriter.Recordable, stale: [StaleAddress], next: UInt64?)
        let sealer = ledger.sealer
        let plan = { @Sendable [reader] (first: UInt64) async throws -> Planned in
            let page = try work.page(from: first)
            // An outcome on record already (no account, the same collision) is not recorded again.
            let entries = try await ApplyPlan.entries(page.items, table: reader).compactMap { entry -> ApplyPlan.Entry? in
                var entry = entry
                entry.cells.removeAll { cell in
                    page.recorded[entry.accountID]?[cell.column].map { ApplyOutcome(unwritten: cell.planned) == $0 } ?? false
                }
                return entry.cells.isEmpty ? nil : entry
            }
            return (
                try ApplyBatchWriter.Recordable(entries, keys: page.keys, sealer: sealer),
                try await ApplyPlan.staleAddresses(page.staleCandidates, table: reader), page.next
            )
        }
        var next: Task<Planned, Error>? = Task { try await plan(0) }
        do {
            while let reading = next {
                let (batch, stale, after) = try await reading.value
                next = after.map { first in Task { try await plan(first) } }
                writer.result.staleAddresses += stale
                try await writer.write(batch, userCount: work.count)
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

    /// Each of `intent`'s accounts with each cell's outcome: the written ones' in order (for an
    /// undo, a value written back is `undone`), the others' as planned.
    static func outcomes(of intent: ApplyIntended, written: [ApplyOutcome], undo: Bool) -> [ApplySettled.Row] {
        var next = written.makeIterator()
        return intent.rows.map { row in
            ApplySettled.Row(
                account: row.account,
                outcomes: row.cells.map { cell in
                    let outcome = ApplyOutcome(unwritten: cell.planned) ?? next.next() ?? .changedMeanwhile
                    return ApplyCellOutcome(cell.column, undo && outcome == .applied ? .undone : outcome)
                })
        }
    }

    /// Settles, from the database's markers, the batches stopped runs to this table left
    /// intended, and finds the run this commit continues: the last unfinished one to this table,
    /// which must have been started with the same mapping and undo. Returns the ledger's apply
    /// history with those settlements in it, read once for the whole commit, and the continued
    /// run's lock. Each stopped run's lock is taken before it is settled: one still running in
    /// another process is not touched, and this commit is refused.
    private func settleStoppedRuns() async throws -> (ApplyHistory, ApplyHistory.Run?, (batches: Int, committed: Int), RunLock?) {
        var history = try ledger.read { try ApplyHistory($0) }
        let mine = started(userCount: 0)
        var recovered = (batches: 0, committed: 0)
        var resumed: ApplyHistory.Run?
        var lock: RunLock?
        for (index, var run) in history.runs.enumerated() where !run.finished && run.writesSameTable(as: mine) {
            lock?.release()
            lock = try RunLock(run.id, in: ledger.directory, holder: RunLock.Holder(host: ledger.actor.host, attempting: run.started.userCount))
            // The run may have finished while its lock was awaited: read it again, now held.
            history = try ledger.read { try ApplyHistory($0) }
            run = history.runs[index]
            guard !run.finished else {
                lock?.release()
                lock = nil
                continue
            }
            let dangling = run.dangling
            if !dangling.isEmpty {
                let markers = Dictionary(try await table.committedBatches(of: run.id).map { ($0.batch, $0) }, uniquingKeysWith: { a, _ in a })
                for intent in dangling {
                    let digest = intent.sha256
                    var rows: [ApplySettled.Row]?
                    if let marker = markers[intent.batch] {
                        guard marker.intentSHA256 == digest, marker.outcomes.count == intent.changes.count else {
                            throw ApplyError(
                                .target,
                                "\(table.targetName): the marker of run \(run.id) batch \(intent.batch) does not match the intent the ledger recorded"
                            )
                        }
                        rows = Self.outcomes(of: intent, written: marker.outcomes, undo: run.started.undoOf != nil)
                        recovered.committed += 1
                    }
                    let settlement = ApplySettled(
                        batch: intent.batch, intentSHA256: digest, committed: rows != nil, recovered: true, undo: run.started.undoOf != nil,
                        rows: rows ?? intent.accountIDs.map { ApplySettled.Row(account: $0, outcomes: []) },
                        salts: RowTree.newSalts(intent.rows.count))
                    recovered.batches += 1
                    _ = try await ledger.append(
                        EventDraft(
                            .applySettled(settlement), idempotencyKey: ApplySettled.idempotencyKey(run: run.id, batch: intent.batch), runID: run.id))
                    logger.info(
                        "apply batch settled from its marker",
                        metadata: ["run": "\(run.id)", "batch": "\(intent.batch)", "committed": "\(settlement.committed)"])
                    run.settled[intent.batch] = settlement
                    run.settledAt[intent.batch] = .now()
                }
            }
            history.runs[index] = run
            resumed = run
        }
        if let resumed {
            let theirs = resumed.started
            guard theirs.keyColumn == mine.keyColumn, theirs.columns == mine.columns, theirs.condition == mine.condition,
                theirs.undoOf == mine.undoOf, theirs.accountsSHA256 == mine.accountsSHA256, theirs.sinceLast == mine.sinceLast
            else {
                throw ApplyError(
                    .usage,
                    "apply run \(resumed.id) to \(theirs.table) was stopped before it finished; finish it with the options it was started with: "
                        + ShellWord.handover("apply", ledger: ledger.directory, ApplyCommandLine.options(theirs, commit: true)))
            }
        }
        return (history, resumed, recovered, lock)
    }
}
