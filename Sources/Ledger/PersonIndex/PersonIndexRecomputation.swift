import Basics
import LMDB

/// The person index recomputed from the events alone, in memory, as `verify --deep` does: fed
/// each event in order, it answers the root over the events fed so far.
public final class PersonIndexRecomputation {
    private let tree = PrefixTree()
    /// How many events were fed.
    public private(set) var size: UInt64 = 0
    /// How many names it holds.
    public private(set) var names: UInt64 = 0

    public init() {}

    /// A leaf hash for asking ``PersonIndexEntry/entries(of:leaf:)`` only which names an event names.
    public static let noLeaf = PrefixTree.emptyRoot

    /// Adds the event next in the log (its rows attached), whose log leaf hash is `leaf`.
    public func add(_ event: RecordedEvent, leaf: SHA256Hash) throws {
        precondition(event.sequence == size + 1, "events are fed in order")
        for entry in PersonIndexEntry.entries(of: event, leaf: leaf) {
            let label = entry.name.label
            if try tree.history(of: label) == nil { names += 1 }
            try tree.append(label: label, sequence: entry.sequence, leaf: entry.leaf)
        }
        size = event.sequence
    }

    /// The root over the events fed.
    public func root() throws -> SHA256Hash { try tree.rootHash() }

    /// What differs between the index as `view`'s ledger stores it and this one, entry by entry
    /// (every history and branch, so that a stored entry changed under a branch hash kept from
    /// before is found); nil when they are the same.
    func difference(fromStoredIn view: LogView) throws -> String? {
        guard let database = view.schema.personIndex else { return "the ledger has no person index database" }
        var histories = tree.heldHistories
        var branches = try tree.heldBranches()
        var problem: String?
        try view.transaction.withCursor(database) { cursor in
            var entry = try cursor.first()
            while let (key, value) = entry, problem == nil {
                switch key.first {
                case UInt8(ascii: "H"):
                    let label = SHA256Hash(UnsafeRawBufferPointer(rebasing: key[1...]))
                    guard key.count == 33, let label, let held = histories.removeValue(forKey: label), PersonHistory(encoded: value) == held else {
                        problem = "the stored history of label \(Hex.encode(Array(key.dropFirst()))) is not the one the events give"
                        break
                    }
                case UInt8(ascii: "N"):
                    let stored = PrefixTree.Node(encoded: value)
                    guard key.count == 34, let prefix = SHA256Hash(UnsafeRawBufferPointer(rebasing: key[2...])),
                        let held = branches.removeValue(forKey: PrefixTree.BranchKey(depth: key[1], prefix: prefix)), let stored,
                        stored.left == held.left, stored.right == held.right, stored.hash == held.hash
                    else {
                        problem = "the stored branch at depth \(key.count > 1 ? Int(key[1]) : -1) is not the one the events give"
                        break
                    }
                default:
                    break
                }
                entry = try cursor.next()
            }
        }
        if let problem { return problem }
        if let missing = histories.keys.first { return "the stored index lacks the history of label \(Hex.encode(missing.bytes))" }
        if let missing = branches.keys.first { return "the stored index lacks the branch at depth \(missing.depth)" }
        return nil
    }
}
