import Basics
import LMDB
import LogEngine

/// The person index computed from the events alone, in memory, as `verify --deep` does and as
/// the index's first build does before writing it: fed each event in order, it answers the root
/// over the events fed so far.
public final class PersonIndexRecomputation {
    /// How many events were fed.
    public private(set) var size: UInt64 = 0
    /// How many names it holds (as of the last ``root()``).
    public private(set) var names: UInt64 = 0
    private var records: [PrefixTreeRecord.Key: PrefixTreeRecord] = [:]
    /// What was fed and is not in the tree yet, in log order (up to ``pendingLimit``): added to
    /// it at once, so that each record on their paths is rewritten once.
    private var pending: [PrefixTree.Addition] = []

    public init() {}

    /// A leaf hash for asking ``PersonIndexEntry/entries(of:leaf:)`` only which names an event names.
    public static let noLeaf = PrefixTree.emptyRoot

    /// Adds the event next in the log (its rows attached), whose log leaf hash is `leaf`.
    public func add(_ event: RecordedEvent, leaf: SHA256Hash) throws {
        precondition(event.sequence == size + 1, "events are fed in order")
        try add(PersonIndexEntry.entries(of: event, leaf: leaf).map(PrefixTree.Addition.init), through: event.sequence)
    }

    /// Additions held before they are added to the tree: about 1.2 GB with the sort's copies,
    /// whatever the log's size; millions at once still rewrite each record on their paths about
    /// once.
    static let pendingLimit = 1 << 23

    /// Adds what the events after those fed, through `last`, add to the index, in log order.
    func add(_ additions: [PrefixTree.Addition], through last: UInt64) throws {
        precondition(last >= size, "events are fed in order")
        pending += additions
        size = last
        if pending.count >= Self.pendingLimit { try addPending() }
    }

    /// The root over the events fed.
    public func root() throws -> SHA256Hash {
        try addPending()
        return try tree.rootHash()
    }

    private var tree: PrefixTree {
        PrefixTree(load: { [unowned self] in self.records[$0] }, save: { [unowned self] in self.records[$0] = $1 })
    }

    private func addPending() throws {
        names += try tree.add(pending)
        pending = []
    }

    /// Every record, in the order the ledger stores them (after ``root()``).
    func recordsInStoredOrder() -> [(PrefixTreeRecord.Key, PrefixTreeRecord)] {
        records.sorted { PrefixTreeRecord.Key.storedOrder($0.key, $1.key) }.map { ($0.key, $0.value) }
    }

    /// What differs between the index as `view`'s ledger stores it and this one, record by
    /// record, so that a stored history or hash changed under a root kept from before is found;
    /// nil when they are the same.
    func difference(fromStoredIn view: LogView) throws -> String? {
        guard let database = view.schema.personIndex else { return "the ledger has no person index database" }
        _ = try root()
        var matched = 0
        var problem: String?
        try view.transaction.withCursor(database) { cursor in
            var entry = try cursor.seek(atLeast: [UInt8(ascii: "S")])
            while let (key, value) = entry, problem == nil {
                guard let place = PrefixTreeRecord.Key(stored: key) else {
                    problem = "the stored index holds an entry that is not a record of its tree"
                    break
                }
                let stored = PrefixTreeRecord(encoded: value)
                guard let held = records[place] else {
                    problem = "the stored index holds a record the events do not give, \(Self.describe(place))"
                    break
                }
                if stored != held { problem = Self.describe(difference: stored, held, at: place) }
                matched += 1
                entry = try cursor.next()
            }
        }
        if let problem { return problem }
        guard matched == records.count else {
            let missing = try records.keys.first { try view.transaction.get(database, key: $0.stored) == nil }
            return "the stored index lacks the record \(missing.map(Self.describe) ?? "of some names") that the events give"
        }
        return nil
    }

    private static func describe(_ key: PrefixTreeRecord.Key) -> String {
        "under the \(key.level)-nibble prefix \(Hex.encode(key.prefix.bytes))"
    }

    /// Which of a stored record's slots is not the one the events give: a name's history, or
    /// the record as a whole.
    private static func describe(difference stored: PrefixTreeRecord?, _ held: PrefixTreeRecord, at key: PrefixTreeRecord.Key) -> String {
        for slot in held.slots {
            guard case .leaf(let label, let history) = slot.content,
                let found = stored?.slots.first(where: { $0.nibble == slot.nibble }),
                case .leaf(label, let storedHistory) = found.content, storedHistory != history
            else { continue }
            return "the stored history of label \(Hex.encode(label.bytes)) is not the one the events give"
        }
        return "the stored record \(describe(key)) is not the one the events give"
    }
}
