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
}

extension ApplyStarted: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        let columns = PerColumn(
            recipientSub: try c.optional("sub_column", v?.columns.recipientSub), email: try c.optional("email_column", v?.columns.email),
            emailForwarding: try c.optional("email_forwarding_column", v?.columns.emailForwarding))
        guard !columns.isEmpty else { throw c.refuse(nil, "no sub_column, email_column or email_forwarding_column") }
        return Self(
            targetKind: try c.field("target_kind", v?.targetKind), target: try c.field("target", v?.target), table: try c.field("table", v?.table),
            keyColumn: try c.field("key_column", v?.keyColumn), columns: columns, condition: try c.optional("condition", v?.condition),
            undoOf: try c.optional("undo_of", v?.undoOf), userCount: try c.count("user_count", v?.userCount),
            batchSize: try c.field("batch_size", v?.batchSize, in: 1...Int(Int32.max)),
            accountsSHA256: try c.optional("accounts_sha256", v?.accountsSHA256),
            sinceLast: try c.flag("since_last", v?.sinceLast))
    }
}

extension ApplyStarted.TargetKind: FieldEnumeration {}
