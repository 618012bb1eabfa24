import Basics

/// Body of "person index committed": the root of the person index over the log's first
/// `indexed_size` events (schemas/audit-evidence.md, "Person index"). A checkpoint covering this
/// event binds the root to the log, so the witnesses who cosign it cosign the index too; an
/// evidence bundle proves from it that the events it shows are all of a person's.
public struct PersonIndexCommitted: Hashable, Sendable {
    /// How many events, from the first, the index covers.
    public var indexedSize: Int
    /// The prefix tree's root, 64 lowercase hex digits.
    public var root: String
    /// How many names the index holds.
    public var names: Int

    public init(indexedSize: Int, root: String, names: Int) {
        self.indexedSize = indexedSize
        self.root = root
        self.names = names
    }

    /// One commit per size indexed.
    public static func idempotencyKey(indexedSize: Int) -> String { "person-index-committed:\(indexedSize)" }
}

extension PersonIndexCommitted: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(indexedSize: try c.count("indexed_size", v?.indexedSize), root: try c.field("root", v?.root), names: try c.count("names", v?.names))
    }
}
