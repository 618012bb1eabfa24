import Basics

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
/// Nodes come from `loadNode`/`loadHistory` (the ledger's `person_index` database) and are
/// kept here once read or changed; ``changes()`` lists what to store back.
final class PrefixTree {
    /// One branch on a label's path: its depth and the hash of the other side.
    struct Step: Equatable, Sendable {
        var depth: UInt8
        var sibling: SHA256Hash
    }

    /// A branch's place: its depth and its labels' shared prefix (the bits beyond zero).
    struct BranchKey: Hashable, Sendable {
        var depth: UInt8
        var prefix: SHA256Hash

        /// `PrefixTree`'s database key: `N` ‖ depth ‖ prefix.
        var stored: [UInt8] { [UInt8(ascii: "N"), depth] + prefix.bytes }
    }

    /// What a side of a branch holds.
    enum Ref: Equatable, Sendable {
        case leaf(SHA256Hash)
        case branch(BranchKey)

        /// 34 bytes: 0 and 0 then the label, or 1 and the depth then the prefix.
        var encoded: [UInt8] {
            switch self {
            case .leaf(let label): return [0, 0] + label.bytes
            case .branch(let key): return [1, key.depth] + key.prefix.bytes
            }
        }

        init?(encoded bytes: UnsafeRawBufferPointer) {
            guard bytes.count == 34, let hash = SHA256Hash(UnsafeRawBufferPointer(rebasing: bytes[2...])) else { return nil }
            switch (bytes[0], bytes[1]) {
            case (0, 0): self = .leaf(hash)
            case (1, let depth): self = .branch(BranchKey(depth: depth, prefix: hash))
            default: return nil
            }
        }
    }

    /// A branch: its two sides and, once computed, its hash.
    struct Node: Sendable {
        var left: Ref
        var right: Ref
        var hash: SHA256Hash?

        /// 100 bytes: hash, left, right.
        var encoded: [UInt8] { (hash?.bytes ?? []) + left.encoded + right.encoded }

        init(left: Ref, right: Ref) {
            self.left = left
            self.right = right
        }

        init?(encoded bytes: UnsafeRawBufferPointer) {
            guard bytes.count == 100, let hash = SHA256Hash(bytes), let left = Ref(encoded: UnsafeRawBufferPointer(rebasing: bytes[32..<66])),
                let right = Ref(encoded: UnsafeRawBufferPointer(rebasing: bytes[66..<100]))
            else { return nil }
            self.left = left
            self.right = right
            self.hash = hash
        }
    }

    /// Every history held in memory, by label (all of them, in a tree held in memory alone).
    var heldHistories: [SHA256Hash: PersonHistory] { histories }

    /// Every branch held in memory, hashed (all of them, in a tree held in memory alone).
    func heldBranches() throws -> [BranchKey: Node] {
        _ = try rootHash()
        return nodes
    }

    /// The root's side: nil while no label is held.
    private(set) var root: Ref?
    private var nodes: [BranchKey: Node] = [:]
    private var histories: [SHA256Hash: PersonHistory] = [:]
    private var changedNodes: Set<BranchKey> = []
    private var changedHistories: Set<SHA256Hash> = []
    private let keepsChanges: Bool
    private let loadNode: (BranchKey) throws -> Node?
    private let loadHistory: (SHA256Hash) throws -> PersonHistory?

    /// A tree whose stored nodes `loadNode` and `loadHistory` read (nil: not stored), keeping
    /// what changes for ``changes()``.
    init(root: Ref?, loadNode: @escaping (BranchKey) throws -> Node?, loadHistory: @escaping (SHA256Hash) throws -> PersonHistory?) {
        self.root = root
        self.loadNode = loadNode
        self.loadHistory = loadHistory
        keepsChanges = true
    }

    /// An empty tree held in memory alone.
    init() {
        root = nil
        loadNode = { _ in nil }
        loadHistory = { _ in nil }
        keepsChanges = false
    }

    /// The history of `label`; nil when the tree does not hold it.
    func history(of label: SHA256Hash) throws -> PersonHistory? {
        if let known = histories[label] { return known }
        let stored = try loadHistory(label)
        if let stored { histories[label] = stored }
        return stored
    }

    /// Adds the thing of event `sequence` with leaf hash `leaf` to the history of `label`.
    func append(label: SHA256Hash, sequence: UInt64, leaf: SHA256Hash) throws {
        var history = try history(of: label) ?? .empty
        history.append(sequence: sequence, leaf: leaf)
        histories[label] = history
        if keepsChanges { changedHistories.insert(label) }
        root = try insert(label, at: root)
    }

    /// The root hash: 32 zero bytes for an empty tree.
    func rootHash() throws -> SHA256Hash {
        guard let root else { return Self.emptyRoot }
        return try hash(of: root)
    }

    /// The root of a tree holding no label.
    static let emptyRoot = SHA256Hash([UInt8](repeating: 0, count: 32))!

    /// The path of `label` from the root down, with its history; nil when the tree does not hold it.
    func proof(of label: SHA256Hash) throws -> (history: PersonHistory, steps: [Step])? {
        var steps: [Step] = []
        var at = root
        while let ref = at {
            switch ref {
            case .leaf(let found):
                guard found == label, let history = try history(of: label) else { return nil }
                return (history, steps)
            case .branch(let key):
                guard Self.sharedBits(label, key.prefix) >= Int(key.depth) else { return nil }
                let node = try self.node(key)
                let right = Self.bit(label, Int(key.depth))
                steps.append(Step(depth: key.depth, sibling: try hash(of: right ? node.left : node.right)))
                at = right ? node.right : node.left
            }
        }
        return nil
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

    /// The branches and histories changed since the tree was read, hashed, for storing back.
    func changes() throws -> (nodes: [(BranchKey, Node)], histories: [(SHA256Hash, PersonHistory)]) {
        _ = try rootHash()
        let changed = try changedNodes.map { ($0, try node($0)) }
        let histories = changedHistories.compactMap { label in self.histories[label].map { (label, $0) } }
        changedNodes = []
        changedHistories = []
        return (changed, histories)
    }

    // MARK: Inside

    private func insert(_ label: SHA256Hash, at ref: Ref?) throws -> Ref {
        guard let ref else { return .leaf(label) }
        switch ref {
        case .leaf(let held):
            guard held != label else { return ref }
            return branch(joining: label, with: ref, at: Self.sharedBits(label, held))
        case .branch(let key):
            let shared = Self.sharedBits(label, key.prefix)
            guard shared >= Int(key.depth) else { return branch(joining: label, with: ref, at: shared) }
            var node = try node(key)
            if Self.bit(label, Int(key.depth)) {
                node.right = try insert(label, at: node.right)
            } else {
                node.left = try insert(label, at: node.left)
            }
            store(node, at: key)
            return ref
        }
    }

    /// A new branch at `depth` holding the new leaf `label` and the side `other`.
    private func branch(joining label: SHA256Hash, with other: Ref, at depth: Int) -> Ref {
        let key = BranchKey(depth: UInt8(depth), prefix: Self.prefix(of: label, bits: depth))
        let leaf = Ref.leaf(label)
        store(Self.bit(label, depth) ? Node(left: other, right: leaf) : Node(left: leaf, right: other), at: key)
        return .branch(key)
    }

    private func store(_ node: Node, at key: BranchKey) {
        var node = node
        node.hash = nil
        nodes[key] = node
        if keepsChanges { changedNodes.insert(key) }
    }

    private func node(_ key: BranchKey) throws -> Node {
        if let known = nodes[key] { return known }
        guard let stored = try loadNode(key) else {
            throw LedgerError(
                .malformedRecord, "the person index has no branch at depth \(key.depth) of \(Hex.encode(key.prefix.bytes)), which its tree names")
        }
        nodes[key] = stored
        return stored
    }

    private func hash(of ref: Ref) throws -> SHA256Hash {
        switch ref {
        case .leaf(let label):
            guard let history = try history(of: label) else {
                throw LedgerError(.malformedRecord, "the person index has no history for label \(Hex.encode(label.bytes)), which its tree names")
            }
            return history.leafHash(label: label)
        case .branch(let key):
            var node = try node(key)
            if let hash = node.hash { return hash }
            let hash = Self.branchHash(depth: key.depth, try hash(of: node.left), try hash(of: node.right))
            node.hash = hash
            nodes[key] = node
            return hash
        }
    }

    static func branchHash(depth: UInt8, _ left: SHA256Hash, _ right: SHA256Hash) -> SHA256Hash {
        let children = left.bytes + right.bytes
        return [0x01, depth].withUnsafeBytes { prefix in children.withUnsafeBytes { SHA256Hash(hashing: prefix, $0) } }
    }

    /// Bit `index` of `label`, counted from the first byte's highest bit.
    static func bit(_ label: SHA256Hash, _ index: Int) -> Bool {
        label.withUnsafeBytes { ($0[index >> 3] >> (7 - UInt8(index & 7))) & 1 == 1 }
    }

    /// How many leading bits `a` and `b` share (256 when equal).
    static func sharedBits(_ a: SHA256Hash, _ b: SHA256Hash) -> Int {
        a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                for i in 0..<32 where x[i] != y[i] { return i * 8 + (x[i] ^ y[i]).leadingZeroBitCount }
                return 256
            }
        }
    }

    /// `label`'s first `bits` bits, the rest zero.
    static func prefix(of label: SHA256Hash, bits: Int) -> SHA256Hash {
        var bytes = label.bytes
        for i in 0..<32 {
            let keep = min(max(bits - i * 8, 0), 8)
            bytes[i] &= keep == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - keep))
        }
        return SHA256Hash(bytes)!
    }
}
