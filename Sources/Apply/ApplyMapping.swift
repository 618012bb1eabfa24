import Basics
import Ledger

/// How the ledger's users meet the app's accounts, named by the operator, never guessed: the
/// table, the column holding the ledger's `account_id`, the column each mapped value goes to
/// (the user's new `sub`, the private relay address team B was given, the forwarding flag), and
/// an optional condition of the operator's own on the rows that may change.
public struct ApplyMapping: Sendable, Equatable {
    /// The app's accounts table.
    public var table: SQLIdentifier
    /// The column matched against the ledger's `account_id` (`--key account_id=COLUMN`).
    public var keyColumn: SQLIdentifier
    /// The column each mapped value is set in (`--set recipient_sub=COLUMN`, `--set
    /// email=COLUMN`, `--set email_forwarding=COLUMN`); at least one.
    public var columns: PerColumn<SQLIdentifier>
    /// An SQL condition on the rows that may be changed (`--where`): the operator's own SQL,
    /// trusted as such, added to every read and write of a row by its key.
    public var condition: String?

    public init(table: SQLIdentifier, keyColumn: SQLIdentifier, columns: PerColumn<SQLIdentifier>, condition: String? = nil) {
        precondition(!columns.isEmpty, "a mapping sets at least one column")
        self.table = table
        self.keyColumn = keyColumn
        self.columns = columns
        self.condition = condition
    }

    /// The mapping from the command line's `--table`, `--key account_id=COLUMN` and each `--set
    /// NAME=COLUMN` (NAME one of `recipient_sub`, `email`, `email_forwarding`, each at most once,
    /// each to a column of its own).
    public init(table: String, key: String, set: [String], condition: String? = nil) throws(ApplyError) {
        func pair(_ text: String, _ option: String, _ expected: String) throws(ApplyError) -> (name: String, column: SQLIdentifier) {
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else {
                throw ApplyError(
                    .usage, "\(option) takes \(expected) (the ledger's name and the accounts table's column), not \"\(InertText.forScreen(text))\"")
            }
            return (parts[0], try SQLIdentifier(parts[1]))
        }
        let names = ApplyColumn.allCases.map(\.rawValue).joined(separator: ", ")
        let keyPair = try pair(key, "--key", "account_id=COLUMN")
        guard keyPair.name == "account_id" else {
            throw ApplyError(
                .usage, "--key takes account_id=COLUMN (the ledger's account_id and the accounts table's column), not \"\(InertText.forScreen(key))\""
            )
        }
        guard !set.isEmpty else {
            throw ApplyError(.usage, "--set names at least one column: recipient_sub=COLUMN, email=COLUMN or email_forwarding=COLUMN")
        }
        var columns = PerColumn<SQLIdentifier>()
        for text in set {
            let (name, column) = try pair(text, "--set", "NAME=COLUMN")
            guard let value = ApplyColumn(rawValue: name) else {
                throw ApplyError(.usage, "--set takes NAME=COLUMN with NAME one of \(names), not \"\(InertText.forScreen(text))\"")
            }
            guard columns[value] == nil else { throw ApplyError(.usage, "--set names \(name) twice") }
            guard column != keyPair.column, !ApplyColumn.allCases.contains(where: { columns[$0] == column }) else {
                throw ApplyError(.usage, "--key and --set name the column \(column) twice: each takes a column of its own")
            }
            columns[value] = column
        }
        self.init(
            table: try SQLIdentifier(table), keyColumn: keyPair.column, columns: columns, condition: condition.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The mapped values, in column order, with the column each is set in.
    public var mapped: [(value: ApplyColumn, column: SQLIdentifier)] {
        ApplyColumn.allCases.compactMap { value in columns[value].map { (value, $0) } }
    }

    /// " AND (condition)" when there is one.
    var andCondition: String { condition.map { " AND (\($0))" } ?? "" }
}
