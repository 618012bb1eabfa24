import Basics
import LogEngine

/// The person index's verifiable map: a binary prefix tree over 256-bit labels, each leaf one
/// name's ``PersonHistory`` (schemas/audit-evidence.md, "Person index"), as in key
/// transparency's prefix trees.
///
/// - A set of one label hashes to its leaf, `SHA-256(0x00 ‖ label ‖ count ‖ chain)`.
/// - A set of two or more hashes to `SHA-256(0x01 ‖ d ‖ left ‖ right)`, with `d` (one byte) the
///   number of leading bits all its labels share, `left` the hash of those whose bit `d` is 0
///   and `right` of those whose bit `d` is 1.
/// - No label: 32 zero bytes.
///
/// The depth in each branch's hash makes the path of a label the one the root allows: a proof
/// (``Step``s from the root down) reaches at most one leaf for a label, so the index cannot hold
/// two histories for one name. A proof shows the sibling hashes only, never another label.
///
/// The tree is kept as ``PrefixTreeRecord``s that `load` reads and `save` writes: the ledger's
/// `person_index` database, or a dictionary for a tree held in memory alone.
final class PrefixTree {
    /// One branch on a label's path: its depth and the hash of the other side.
    struct Step: Equatable, Sendable {
        var depth: UInt8
        var sibling: SHA256Hash
    }

    /// One thing added to a name's history: the name's label, its event's sequence number and
    /// its leaf hash.
    struct Addition: Sendable {
        var label: SHA256Hash
        var sequence: UInt64
        var leaf: SHA256Hash
    }

    private let load: (PrefixTreeRecord.Key) throws -> PrefixTreeRecord?
    private let save: (PrefixTreeRecord.Key, PrefixTreeRecord) throws -> Void

    /// A tree whose records `load` reads (nil: none there) and `save` writes.
    init(
        load: @escaping (PrefixTreeRecord.Key) throws -> PrefixTreeRecord?, save: @escaping (PrefixTreeRecord.Key, PrefixTreeRecord) throws -> Void
    ) {
        self.load = load
        self.save = save
    }

    /// Adds `additions`, given in log order, to their names' histories; writes the records on
    /// their paths once each; returns how many names are new.
    func add(_ additions: [Addition]) throws -> UInt64 {
        guard !additions.isEmpty else { return 0 }
        // By label, and in log order within a label: a name's history chains them as they came.
        let order = additions.indices.sorted { a, b in
            let c = Self.compare(additions[a].label, additions[b].label)
            return c != 0 ? c < 0 : a < b
        }
        let sorted = order.map { additions[$0] }
        var newNames: UInt64 = 0
        _ = try update(.root, slots: try load(.root)?.slots ?? [], with: sorted[...], newNames: &newNames)
        return newNames
    }

    /// The root hash: 32 zero bytes for an empty tree.
    func rootHash() throws -> SHA256Hash {
        try load(.root)?.hash(level: 0) ?? Self.emptyRoot
    }

    /// The root of a tree holding no label.
    static let emptyRoot = SHA256Hash([UInt8](repeating: 0, count: 32))!

    /// The path of `label` from the root down, with its history; nil when the tree does not hold it.
    func proof(of label: SHA256Hash) throws -> (history: PersonHistory, steps: [Step])? {
        guard var record = try load(.root) else { return nil }
        var key = PrefixTreeRecord.Key.root
        var steps: [Step] = []
        while true {
            let nibble = Self.nibble(label, key.level)
            steps += record.steps(level: key.level, toward: nibble)
            guard let slot = record.slots.first(where: { $0.nibble == nibble }) else { return nil }
            switch slot.content {
            case .leaf(let held, let history):
                return held == label ? (history, steps) : nil
            case .subtree:
                key = key.child(nibble)
                record = try stored(key)
            }
        }
    }

    /// The root a proof leads to from `label`'s leaf `leaf`; nil when its depths do not rise
    /// strictly from the root down.
    static func root(label: SHA256Hash, leaf: SHA256Hash, steps: [Step]) -> SHA256Hash? {
        var previous = -1
        for step in steps {
            guard Int(step.depth) > previous else { return nil }
            previous = Int(step.depth)
        }
        var hash = leaf
        for step in steps.reversed() {
            hash = bit(label, Int(step.depth)) ? branchHash(depth: step.depth, step.sibling, hash) : branchHash(depth: step.depth, hash, step.sibling)
        }
        return hash
    }

    static func branchHash(depth: UInt8, _ left: SHA256Hash, _ right: SHA256Hash) -> SHA256Hash {
        // 0x01 ‖ depth ‖ left as the prefix (34 bytes), right as the data.
        var prefix: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        return withUnsafeMutableBytes(of: &prefix) { prefix in
            prefix[0] = 0x01
            prefix[1] = depth
            left.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: prefix[2..<34]).copyMemory(from: $0) }
            return right.withUnsafeBytes { SHA256Hash(hashing: UnsafeRawBufferPointer(rebasing: prefix[0..<34]), $0) }
        }
    }

    /// Bit `index` of `label`, counted from the first byte's highest bit.
    static func bit(_ label: SHA256Hash, _ index: Int) -> Bool {
        label.withUnsafeBytes { ($0[index >> 3] >> (7 - UInt8(index & 7))) & 1 == 1 }
    }

    /// Nibble `index` of `label`, counted from the first byte's high nibble.
    static func nibble(_ label: SHA256Hash, _ index: UInt8) -> UInt8 {
        label.withUnsafeBytes { index % 2 == 0 ? $0[Int(index) / 2] >> 4 : $0[Int(index) / 2] & 0x0F }
    }

    /// `a` against `b` by their bytes: negative, zero or positive.
    static func compare(_ a: SHA256Hash, _ b: SHA256Hash) -> Int {
        a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                for offset in stride(from: 0, to: 32, by: 8) {
                    let p = UInt64(bigEndian: x.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                    let q = UInt64(bigEndian: y.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                    if p != q { return p < q ? -1 : 1 }
                }
                return 0
            }
        }
    }

    // MARK: Inside

    /// Brings the record at `key`, holding `slots`, up to date with `additions` (all under its
    /// prefix, by label), saves it and returns its hash.
    private func update(
        _ key: PrefixTreeRecord.Key, slots initial: [PrefixTreeRecord.Slot], with additions: ArraySlice<Addition>, newNames: inout UInt64
    ) throws -> SHA256Hash {
        var slots = initial
        var start = additions.startIndex
        while start < additions.endIndex {
            // The additions taking one next nibble.
            let nibble = Self.nibble(additions[start].label, key.level)
            var end = start + 1
            while end < additions.endIndex, Self.nibble(additions[end].label, key.level) == nibble { end += 1 }
            let group = additions[start..<end]
            let oneName = group.first!.label == group.last!.label
            let index = slots.firstIndex { $0.nibble >= nibble } ?? slots.endIndex
            if index < slots.endIndex, slots[index].nibble == nibble {
                switch slots[index].content {
                case .leaf(let label, let history) where oneName && label == group.first!.label:
                    slots[index].content = .leaf(label: label, history: Self.appending(group, to: history))
                case .leaf(let label, let history):
                    // A second name takes this nibble: the held one moves a level down with it.
                    let held = PrefixTreeRecord.Slot(nibble: Self.nibble(label, key.level + 1), content: .leaf(label: label, history: history))
                    slots[index].content = .subtree(try update(key.child(nibble), slots: [held], with: group, newNames: &newNames))
                case .subtree:
                    let child = key.child(nibble)
                    slots[index].content = .subtree(try update(child, slots: try stored(child).slots, with: group, newNames: &newNames))
                }
            } else if oneName {
                slots.insert(
                    PrefixTreeRecord.Slot(nibble: nibble, content: .leaf(label: group.first!.label, history: Self.appending(group, to: .empty))),
                    at: index)
                newNames += 1
            } else {
                let below = try update(key.child(nibble), slots: [], with: group, newNames: &newNames)
                slots.insert(PrefixTreeRecord.Slot(nibble: nibble, content: .subtree(below)), at: index)
            }
            start = end
        }
        let record = PrefixTreeRecord(slots: slots)
        try save(key, record)
        return record.hash(level: key.level)
    }

    private static func appending(_ additions: ArraySlice<Addition>, to history: PersonHistory) -> PersonHistory {
        var history = history
        for addition in additions { history.append(sequence: addition.sequence, leaf: addition.leaf) }
        return history
    }

    /// The record at `key`, which a slot above says is there.
    private func stored(_ key: PrefixTreeRecord.Key) throws -> PrefixTreeRecord {
        guard let record = try load(key) else {
            throw LedgerError(
                .malformedRecord,
                "the person index has no record under the \(key.level)-nibble prefix \(Hex.encode(key.prefix.bytes)), which the record above names")
        }
        return record
    }
}
