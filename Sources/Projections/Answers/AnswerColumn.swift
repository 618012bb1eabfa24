import Basics
import Ledger

/// What kind of value a column holds, as every output and export writes it.
public enum ColumnType: String, Sendable, CaseIterable {
    /// A string (in exports, SQL `text`).
    case text
    /// A whole number.
    case integer
    /// true or false (in SQLite, 1 or 0).
    case boolean
    /// A time, written as RFC 3339 UTC with microseconds (in PostgreSQL, `timestamptz`).
    case time
    /// A JSON document: text in CSV and SQLite, nested as it is in JSON lines, `jsonb` in
    /// PostgreSQL.
    case json
    /// A list of events (`user`'s history): an array of `events` rows in JSON, their sequence
    /// numbers separated by spaces in CSV.
    case events
}

/// One column of an answer, declared once: its name, its type, whether it can be null,
/// whether it is personal data, what it means, and how it is read from a row.
public struct AnswerColumn<Row>: Sendable {
    /// The name every output and export uses (`snake_case`).
    public let name: String
    public let type: ColumnType
    /// Whether the value may be missing (null in JSON and SQL, empty in CSV, `-` on screen).
    public let isOptional: Bool
    /// Whether the value is personal data, present only when the user asked for it
    /// (`--include-personal-data`), and never once the user is erased.
    public let isPersonal: Bool
    /// What the value means, in one line, for the column reference.
    public let meaning: String
    /// The value in `row`.
    public let value: @Sendable (Row) -> QueryTable.Cell

    public init(
        _ name: String, _ type: ColumnType, optional: Bool = true, personal: Bool = false, _ meaning: String,
        value: @escaping @Sendable (Row) -> QueryTable.Cell
    ) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.isPersonal = personal
        self.meaning = meaning
        self.value = value
    }

    /// The same column read from a row that holds this one's row.
    public func reading<Outer>(_ inner: @escaping @Sendable (Outer) -> Row) -> AnswerColumn<Outer> {
        let value = self.value
        return AnswerColumn<Outer>(name, type, optional: isOptional, personal: isPersonal, meaning) { value(inner($0)) }
    }

    /// The same declaration (name, type, meaning) read another way, from another kind of row:
    /// one fact keeps one name and meaning in every answer.
    public func rebound<Other>(_ value: @escaping @Sendable (Other) -> QueryTable.Cell) -> AnswerColumn<Other> {
        AnswerColumn<Other>(name, type, optional: isOptional, personal: isPersonal, meaning, value: value)
    }

    /// What the column reference says about the column, without the way to read it.
    public var description: ColumnDescription {
        ColumnDescription(name: name, type: type, isOptional: isOptional, isPersonal: isPersonal, meaning: meaning)
    }
}

/// A column's declaration without its row type: what the reference and the schema checks read.
public struct ColumnDescription: Sendable, Equatable {
    public let name: String
    public let type: ColumnType
    public let isOptional: Bool
    public let isPersonal: Bool
    public let meaning: String
}

extension QueryTable.Cell {
    /// A text cell, or null.
    public static func text(_ s: String?) -> QueryTable.Cell { s.map(QueryTable.Cell.text) ?? .null }
    /// A time cell, or null.
    public static func time(_ t: Timestamp?) -> QueryTable.Cell { t.map(QueryTable.Cell.time) ?? .null }
    /// An integer cell, or null.
    public static func int(_ i: Int?) -> QueryTable.Cell { i.map(QueryTable.Cell.int) ?? .null }
    /// A Boolean cell, or null.
    public static func bool(_ b: Bool?) -> QueryTable.Cell { b.map(QueryTable.Cell.bool) ?? .null }
}
