import Basics

/// A table or column name as SQL takes it from the operator: always quoted, its quotes doubled,
/// so a name is never read as SQL.
public struct SQLIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// The name as given.
    public let name: String

    /// A name of 1 to 63 bytes with no NUL (PostgreSQL's longest identifier; SQLite takes it too).
    public init(_ name: String) throws(ApplyError) {
        guard !name.isEmpty, name.utf8.count <= 63, !name.utf8.contains(0) else {
            throw ApplyError(.usage, "\"\(name)\" cannot be a table or column name (1 to 63 bytes, no NUL)")
        }
        self.name = name
    }

    /// The name quoted as an SQL identifier.
    public var quoted: String { "\"" + name.replacingEvery("\"", with: "\"\"") + "\"" }

    public var description: String { name }
}
