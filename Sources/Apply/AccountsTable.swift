/// The app's accounts table as `apply` reads and writes it, through a ``ApplyMapping``: the
/// one seam between the plan and a database (SQLite, PostgreSQL). Values are always bound
/// parameters; only the mapping's quoted names and the operator's condition are SQL.
public protocol AccountsTable: Sendable {
    /// The mapping this table is read through.
    var mapping: ApplyMapping { get }

    /// For each key held by a row the mapping may change, the row's current value of the `sub`
    /// column (nil for NULL). Keys of no such row are absent.
    func currentValues(forKeys keys: [String]) async throws -> [String: String?]

    /// For each of `values`, the keys of every row (whatever the condition) whose `sub` column holds it.
    func holders(of values: [String]) async throws -> [String: [String]]

    /// Writes `changes` and the batch's marker in one transaction, each change only when its
    /// row still holds the old value and no other row holds the new one. Returns each change's
    /// outcome, in order.
    func write(_ changes: [AccountChange], marker: ApplyMarker) async throws -> [AccountChange.Outcome]

    /// The batches of `run` whose transaction committed, by their markers.
    func committedBatches(of run: String) async throws -> [ApplyMarker]
}

/// One account's planned change: the row with `key` from `old` to `new`.
public struct AccountChange: Sendable, Equatable {
    public var key: String
    public var old: String?
    public var new: String

    public init(key: String, old: String?, new: String) {
        self.key = key
        self.old = old
        self.new = new
    }

    /// What became of a change when it was written.
    public enum Outcome: String, Sendable, Equatable {
        /// The row held the old value and now holds the new one.
        case applied
        /// The row no longer held the old value (or no longer passes the condition, or is gone): not written.
        case changedMeanwhile = "changed-meanwhile"
        /// Another row came to hold the new value: not written.
        case collision
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
    /// How many of its changes were written.
    public var applied: Int

    public init(run: String, batch: Int, intentSHA256: String, applied: Int = 0) {
        self.run = run
        self.batch = batch
        self.intentSHA256 = intentSHA256
        self.applied = applied
    }

    /// The marker table's name.
    public static let table = "handover_apply"

    /// The statement creating the marker table when it is missing, its commit time of the
    /// database's type `timeType`: one row per committed batch.
    static func createTable(timeType: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(table) (
            run text NOT NULL,
            batch integer NOT NULL,
            intent_sha256 text NOT NULL,
            applied integer NOT NULL,
            committed_at \(timeType) NOT NULL,
            PRIMARY KEY (run, batch)
        )
        """
    }
}
