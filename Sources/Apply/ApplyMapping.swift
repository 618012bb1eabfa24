/// How the ledger's users meet the app's accounts, named by the operator, never guessed: the
/// table, the column holding the ledger's `account_id`, the column that takes the user's new
/// `sub`, and an optional condition of the operator's own on the rows that may change.
public struct ApplyMapping: Sendable, Equatable {
    /// The app's accounts table.
    public var table: SQLIdentifier
    /// The column matched against the ledger's `account_id` (`--key account_id=COLUMN`).
    public var keyColumn: SQLIdentifier
    /// The column set to the user's `recipient_sub` (`--set recipient_sub=COLUMN`).
    public var subColumn: SQLIdentifier
    /// An SQL condition on the rows that may be changed (`--where`): the operator's own SQL,
    /// trusted as such, added to every read and write of a row by its key.
    public var condition: String?

    public init(table: SQLIdentifier, keyColumn: SQLIdentifier, subColumn: SQLIdentifier, condition: String? = nil) {
        self.table = table
        self.keyColumn = keyColumn
        self.subColumn = subColumn
        self.condition = condition
    }

    /// The mapping from the command line's `--table`, `--key account_id=COLUMN` and
    /// `--set recipient_sub=COLUMN`.
    public init(table: String, key: String, set: String, condition: String? = nil) throws(ApplyError) {
        func pair(_ text: String, _ field: String, _ option: String) throws(ApplyError) -> SQLIdentifier {
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0] == field else {
                throw ApplyError(.usage, "\(option) takes \(field)=COLUMN (the ledger's \(field) and the accounts table's column), not \"\(text)\"")
            }
            return try SQLIdentifier(parts[1])
        }
        self.init(
            table: try SQLIdentifier(table), keyColumn: try pair(key, "account_id", "--key"), subColumn: try pair(set, "recipient_sub", "--set"),
            condition: condition.flatMap { $0.isEmpty ? nil : $0 })
        guard keyColumn != subColumn else { throw ApplyError(.usage, "--key and --set name the same column, \(keyColumn)") }
    }

    /// " AND (condition)" when there is one.
    var andCondition: String { condition.map { " AND (\($0))" } ?? "" }
}
