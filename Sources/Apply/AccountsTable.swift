import Ledger

/// The app's accounts table as `apply` reads and writes it, through a ``ApplyMapping``: the
/// one seam between the plan and a database (SQLite, PostgreSQL). Values are always bound
/// parameters; only the mapping's quoted names and the operator's condition are SQL.
public protocol AccountsTable: Sendable {
    /// The mapping this table is read through.
    var mapping: ApplyMapping { get }
    /// The kind of database, and the database as the ledger names it: a SQLite file's path, or
    /// a PostgreSQL URL without its user and password (the log holds no `@`: the independent
    /// checks read one as a plaintext email).
    var targetKind: ApplyStarted.TargetKind { get }
    var targetName: String { get }

    /// For each key held by a row the mapping may change, the row's current value of each
    /// mapped column as text, in ``ApplyMapping/mapped`` order (nil for NULL). Keys of no such
    /// row are absent.
    func currentValues(forKeys keys: [String]) async throws -> [String: [String?]]

    /// For each of `values`, the keys of every row (whatever the condition) whose `column` holds
    /// it (compared as the column compares, through its index).
    func holders(of values: [String], in column: ApplyColumn) async throws -> [String: [String]]

    /// Writes `changes` and the batch's marker in one transaction, each change only when its
    /// row still holds the old value in that column (and, for a column of unique values, no
    /// other row holds the new one). Returns each change's outcome, in order: `applied`,
    /// `changed-meanwhile` (the row no longer held the old value, no longer passes the condition,
    /// or is gone) or `collision` (another row came to hold the new value).
    func write(_ changes: [AccountChange], marker: ApplyMarker) async throws -> [ApplyOutcome]

    /// The forwarding flag as the database shows it in text: `true`/`false` in PostgreSQL (a
    /// boolean column), `1`/`0` in SQLite.
    func flagText(_ forwarding: Bool) -> String

    /// The batches of `run` whose transaction committed, by their markers.
    func committedBatches(of run: String) async throws -> [ApplyMarker]

    /// Ends the table's use (closes a connection).
    func close() async
}

extension AccountsTable {
    public func close() async {}
}

/// One cell's planned change: the row with `key`, its `column` from `old` to `new` (nil: NULL,
/// which only an undo writes back).
public struct AccountChange: Sendable, Equatable {
    public var key: String
    public var column: ApplyColumn
    public var old: String?
    public var new: String?

    public init(key: String, column: ApplyColumn = .recipientSub, old: String?, new: String?) {
        self.key = key
        self.column = column
        self.old = old
        self.new = new
    }
}

/// The row `apply` writes in its own table of the app's database (`handover_apply`), in the
/// same transaction as a batch's changes: after a crash, it tells which batches committed.
public struct ApplyMarker: Sendable, Equatable {
    /// The apply run.
    public var run: String
    /// The batch's number within the run.
    public var batch: Int
    /// SHA-256 of the batch's intent as the ledger records it, hex.
    public var intentSHA256: String
    /// Each change's outcome, in the batch's order: by account, then by column (filled in by the write).
    public var outcomes: [ApplyOutcome]

    public init(run: String, batch: Int, intentSHA256: String, outcomes: [ApplyOutcome] = []) {
        self.run = run
        self.batch = batch
        self.intentSHA256 = intentSHA256
        self.outcomes = outcomes
    }

    /// The letter of each outcome a write decides, as the marker row's `outcomes` column and the
    /// write's own SQL hold them: the one table of them.
    static let letters: [ApplyOutcome: Character] = [.applied: "a", .changedMeanwhile: "m", .collision: "c"]

    /// The outcome `letter` stands for (``letters``); nil for any other.
    static func outcome(_ letter: Character) -> ApplyOutcome? { letters.first { $0.value == letter }?.key }

    /// The outcomes as the marker row's `outcomes` column holds them: one letter a change.
    var outcomeLetters: String { String(outcomes.map { ApplyMarker.letters[$0] ?? ApplyMarker.letters[.changedMeanwhile]! }) }

    /// The marker read back from its row.
    init(run: String, batch: Int, intentSHA256: String, outcomeLetters: String) throws(ApplyError) {
        let outcomes = outcomeLetters.compactMap(ApplyMarker.outcome)
        guard outcomes.count == outcomeLetters.count else {
            throw ApplyError(
                .target, "\(ApplyMarker.table): run \(run) batch \(batch) has outcomes \"\(outcomeLetters)\", not letters a, m and c")
        }
        self.init(run: run, batch: batch, intentSHA256: intentSHA256, outcomes: outcomes)
    }

    /// The marker table's name.
    public static let table = "handover_apply"

    /// The statement creating the marker table when it is missing, its commit time of the
    /// database's type `timeType`: one row per committed batch, with how many of its changes
    /// were applied and each change's outcome (``outcomeLetters``).
    static func createTable(timeType: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(table) (
            run text NOT NULL,
            batch integer NOT NULL,
            intent_sha256 text NOT NULL,
            applied integer NOT NULL,
            outcomes text NOT NULL,
            committed_at \(timeType) NOT NULL,
            PRIMARY KEY (run, batch)
        )
        """
    }
}
