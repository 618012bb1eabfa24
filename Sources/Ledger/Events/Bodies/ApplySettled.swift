import Basics
import LogEngine

/// Body of "apply settled" (team B): what became of one intended batch. When its transaction
/// committed, each account's outcome in each of its cells, in the intent's order; when it did not
/// (the run was interrupted before the commit), none, and the batch's users are planned again.
///
/// In v2 (salted rows), as for ``ApplyIntended``, each account's line (``ApplyRowLine``) is
/// stored beside the event and the JSON holds their count and root. A v1 body holds its accounts
/// and their `recipient_sub` outcomes in its JSON.
public struct ApplySettled: Hashable, Sendable, RowCommittingBody {
    /// One account of the batch: its key and, when the batch committed, each cell's outcome in
    /// column order (empty when it did not).
    public struct Row: Hashable, Sendable {
        public var account: String
        public var outcomes: [ApplyCellOutcome]

        public init(account: String, outcomes: [ApplyCellOutcome]) {
            self.account = account
            self.outcomes = outcomes
        }

        /// The outcome of `column`, when the batch committed and planned it for this account.
        public func outcome(_ column: ApplyColumn) -> ApplyOutcome? { outcomes.first { $0.column == column }?.outcome }
    }

    public var batch: Int
    /// The intent's ``ApplyIntended/sha256``.
    public var intentSHA256: String
    /// Whether the batch's transaction committed in the app's database.
    public private(set) var committed: Bool
    /// Whether this was learned from the batch's marker row by a later run, after the run
    /// that sent it was interrupted (else it is the sending run's own answer).
    public var recovered: Bool
    /// Whether the batch belongs to an undo run: only `undone` then changes a user's state.
    public var undo: Bool
    /// The intent's accounts, in its order.
    public private(set) var rows: [Row]
    /// v2: each row's salt; empty in v1.
    public private(set) var salts: [[UInt8]]
    /// v2: the root of the accounts' row tree; nil in v1.
    public private(set) var rowsRoot: SHA256Hash?
    /// How many accounts the batch holds (those of a v2 body read from its JSON alone included).
    public private(set) var rowCount: Int
    /// v2: the lines the rows hash to and the `rows` database holds (``rowLines``), made once.
    private var lines: [[UInt8]] = []

    /// A settlement in v1 form (no salts; one `recipient_sub` outcome a row) or in v2 form (a salt
    /// for each account; the root is computed).
    public init(batch: Int, intentSHA256: String, committed: Bool, recovered: Bool, undo: Bool, rows: [Row], salts: [[UInt8]] = []) {
        precondition(rows.allSatisfy { $0.outcomes.isEmpty != committed }, "a committed settlement has each row's outcomes, another none")
        precondition(
            salts.isEmpty ? rows.allSatisfy { $0.outcomes.allSatisfy { $0.column == .recipientSub } } : salts.count == rows.count,
            "a v1 settlement has recipient_sub outcomes alone; a v2 settlement salts each account")
        self.batch = batch
        self.intentSHA256 = intentSHA256
        self.committed = committed
        self.recovered = recovered
        self.undo = undo
        self.rows = rows
        self.salts = salts
        rowCount = rows.count
        guard !salts.isEmpty else { return }
        lines = salts.indices.map { i in
            ApplyRowLine.settled(account: rows[i].account, outcomes: committed ? rows[i].outcomes : nil, salt: salts[i]).bytes
        }
        rowsRoot = RowTree(kind: .applySettledRow, rows: lines).root
    }

    /// A settlement of `recipient_sub` cells alone, the form of versions that set no other
    /// column: each account's outcome (none when the batch did not commit).
    public init(
        batch: Int, intentSHA256: String, committed: Bool, recovered: Bool, undo: Bool, accountIDs: [String], outcomes: [ApplyOutcome],
        salts: [[UInt8]] = []
    ) {
        let rows = accountIDs.indices.map { i in
            Row(account: accountIDs[i], outcomes: committed ? [ApplyCellOutcome(.recipientSub, outcomes[i])] : [])
        }
        self.init(batch: batch, intentSHA256: intentSHA256, committed: committed, recovered: recovered, undo: undo, rows: rows, salts: salts)
    }

    /// The accounts' keys, in the batch's order.
    public var accountIDs: [String] { rows.map(\.account) }

    /// Whether this is a v2 body read from its JSON alone, its rows not attached yet.
    public var lacksRows: Bool { rows.count != rowCount }

    /// v2: each account's line, as the `rows` database holds it; empty in v1.
    public var rowLines: [[UInt8]] { rowsRoot == nil || lacksRows ? [] : lines }

    public var keptRowCount: Int { rowsRoot == nil ? 0 : rowCount }

    /// Gives a v2 body read from its JSON its rows, read from the `rows` database: each must be
    /// a settled account's line (with outcomes exactly when the batch committed), and together
    /// they must hash to ``rowsRoot``.
    public mutating func attach(rowLines lines: [[UInt8]]) throws {
        try checkStored(lines)
        var rows: [Row] = []
        var salts: [[UInt8]] = []
        for (i, line) in lines.enumerated() {
            guard case .settled(let account, let outcomes, let salt)? = ApplyRowLine(line, kind: .applySettledRow), (outcomes != nil) == committed
            else {
                throw malformed("stored row \(i) is not a settled account's line" + (committed ? " with its outcomes" : " without outcomes"))
            }
            rows.append(Row(account: account, outcomes: outcomes ?? []))
            salts.append(salt)
        }
        (self.rows, self.salts, self.lines) = (rows, salts, lines)
    }

    /// Checks the lines the `rows` database holds for this v2 body without decoding them: one
    /// for each account, together hashing to ``rowsRoot`` (so they are the lines written).
    public func checkStored(_ lines: [[UInt8]]) throws {
        guard let rowsRoot, lines.count == rowCount else { throw malformed("\(lines.count) stored rows for \(rowCount)") }
        guard RowTree(kind: .applySettledRow, rows: lines).root == rowsRoot else {
            throw malformed("the stored rows do not hash to the batch's rows_root: a row was changed")
        }
    }

    private func malformed(_ text: String) -> LedgerError { LedgerError(.malformedRecord, "apply settled batch \(batch): \(text)") }

    /// This event's idempotency key in run `run`.
    public static func idempotencyKey(run: String, batch: Int) -> String { "apply-settled:\(run):\(batch)" }
}

extension ApplySettled: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        let batch = try c.count("batch", v?.batch)
        let intentSHA256 = try c.field("intent_sha256", v?.intentSHA256)
        let committed = try c.field("committed", v?.committed)
        let recovered = try c.field("recovered", v?.recovered)
        let undo = try c.field("undo", v?.undo)
        if let rowsRoot = try c.optional("rows_root", v?.rowsRoot) {
            // v2: the rows are kept beside the event; their count and root stand for them.
            var settled = Self(batch: batch, intentSHA256: intentSHA256, committed: committed, recovered: recovered, undo: undo, rows: [])
            settled.rowsRoot = rowsRoot
            settled.rowCount = try c.field("rows", v?.rowCount, in: 1...ApplyIntended.maximumRows)
            return settled
        }
        // v1: the accounts, and each one's recipient_sub outcome when committed.
        let accountIDs = try c.field("account_ids", v?.accountIDs)
        let outcomes = try c.field("outcomes", v?.rows.compactMap { $0.outcomes.first?.outcome.rawValue }).map { name in
            guard let o = ApplyOutcome(rawValue: name), o != .kept else { throw LedgerError(.malformedRecord, "apply settled: unknown outcome") }
            return o
        }
        guard accountIDs.count <= ApplyIntended.maximumRows, outcomes.count == (committed ? accountIDs.count : 0) else {
            throw LedgerError(.malformedRecord, "apply settled: batch \(batch) has \(outcomes.count) outcomes for \(accountIDs.count) rows")
        }
        return Self(
            batch: batch, intentSHA256: intentSHA256, committed: committed, recovered: recovered, undo: undo, accountIDs: accountIDs,
            outcomes: outcomes)
    }
}
