import Basics

/// Body of "apply started" (team B): `apply --commit` (or `--undo`) began writing users' new
/// values (the `sub`, and where mapped the private relay address and the forwarding flag) to the
/// app's own accounts table. Its run ID is in the actor; the batches follow as "apply intended"
/// and "apply settled", and "run finished" (command `apply`) ends it.
public struct ApplyStarted: Hashable, Sendable {
    /// The kind of database written.
    public enum TargetKind: String, CaseIterable, Sendable {
        case sqlite
        case postgres
    }

    public var targetKind: TargetKind
    /// The database: a SQLite file's path, or a PostgreSQL URL without its user and password.
    public var target: String
    /// The accounts table and the key column, as the operator named them.
    public var table: String
    public var keyColumn: String
    /// The column each mapped value goes to, as the operator named it (`--set NAME=COLUMN`);
    /// at least one. Runs of versions that knew only the `sub` map `recipient_sub` alone.
    public var columns: PerColumn<String>
    /// The operator's own SQL condition on the rows that may change (`--where`).
    public var condition: String?
    /// For an undo: the apply run whose changes this one restores.
    public var undoOf: String?
    /// How many users the run considers.
    public var userCount: Int
    /// The most users one batch (one transaction in the app's database) holds.
    public var batchSize: Int
    /// The run was limited to the accounts of a list (`--users`): SHA-256 (hex) of their
    /// `account_id`s, sorted, each followed by a line feed. Nil for every migrated user.
    public var accountsSHA256: String?
    /// The run took, for each column, only what changed since the last run that set it
    /// (`--since-last`).
    public var sinceLast: Bool

    /// A run's start; `accountsSHA256` and `sinceLast` say how `--users` and `--since-last`
    /// limited it, so that it is resumed with the same scope.
    public init(
        targetKind: TargetKind, target: String, table: String, keyColumn: String, columns: PerColumn<String>, condition: String?,
        undoOf: String?, userCount: Int, batchSize: Int, accountsSHA256: String? = nil, sinceLast: Bool = false
    ) {
        precondition(!columns.isEmpty, "an apply run maps at least one column")
        self.targetKind = targetKind
        self.target = target
        self.table = table
        self.keyColumn = keyColumn
        self.columns = columns
        self.condition = condition
        self.undoOf = undoOf
        self.userCount = userCount
        self.accountsSHA256 = accountsSHA256
        self.sinceLast = sinceLast
        self.batchSize = batchSize
    }

    /// The mapped values, in column order, with the column each goes to.
    public var mapped: [(value: ApplyColumn, column: String)] {
        ApplyColumn.allCases.compactMap { value in columns[value].map { (value, $0) } }
    }

    /// This event's idempotency key in run `run`.
    public static func idempotencyKey(run: String) -> String { "apply-started:" + run }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("accounts_sha256", accountsSHA256)
        w.field("batch_size", batchSize)
        w.field("condition", condition)
        w.field("email_column", columns.email)
        w.field("email_forwarding_column", columns.emailForwarding)
        w.field("key_column", keyColumn)
        w.field("since_last", sinceLast ? true : nil)
        w.field("sub_column", columns.recipientSub)
        w.field("table", table)
        w.field("target", target)
        w.field("target_kind", targetKind.rawValue)
        w.field("undo_of", undoOf)
        w.field("user_count", userCount)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        let columns = PerColumn(
            recipientSub: try r.optionalString("sub_column"), email: try r.optionalString("email_column"),
            emailForwarding: try r.optionalString("email_forwarding_column"))
        guard !columns.isEmpty else { throw LedgerError(.malformedRecord, "\(r.context): no sub_column, email_column or email_forwarding_column") }
        self.init(
            targetKind: try r.enumeration("target_kind", TargetKind.self), target: try r.string("target"), table: try r.string("table"),
            keyColumn: try r.string("key_column"), columns: columns, condition: try r.optionalString("condition"),
            undoOf: try r.optionalString("undo_of"), userCount: try r.count("user_count"), batchSize: try r.int("batch_size", in: 1...Int(Int32.max)),
            accountsSHA256: try r.optionalString("accounts_sha256"), sinceLast: try r.optionalBool("since_last") ?? false)
    }
}
