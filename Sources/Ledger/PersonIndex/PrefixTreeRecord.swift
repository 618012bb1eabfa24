import Basics
import LogEngine

/// How the person index stores its prefix tree: one record per nibble-aligned prefix that two
/// or more labels share, holding a slot for each next nibble those labels take (at most 16).
///
/// A slot holding one label keeps that name's leaf: the label and its ``PersonHistory``. A slot
/// holding more keeps the hash of the record one level down. A name added therefore rewrites
/// the records on its label's path (about log₁₆ of the names), not one entry per binary branch,
/// and its history is written where its path ends. The database key of each is its ``Key``'s
/// `stored`.
///
/// The hashes are the tree's own (``PrefixTree``): a record's hash is that of the set of labels
/// under its prefix, the binary branches between its slots computed when it is read.
struct PrefixTreeRecord: Equatable, Sendable {
    /// A record's place: how many nibbles its prefix has, and the prefix (the rest zero).
    struct Key: Hashable, Sendable {
        var level: UInt8
        var prefix: SHA256Hash

        /// The record of every label: the tree's root.
        static let root = Key(level: 0, prefix: PrefixTree.emptyRoot)

        /// The record one level down, under `nibble`.
        func child(_ nibble: UInt8) -> Key {
            var bytes = prefix.bytes
            let index = Int(level) / 2
            bytes[index] |= level % 2 == 0 ? nibble << 4 : nibble
            return Key(level: level + 1, prefix: SHA256Hash(bytes)!)
        }

        /// The database key: `S` ‖ min(level, 4) ‖ the 32-byte prefix ‖ the level. The few
        /// records of the top four levels, which most changes rewrite, sit together level by
        /// level; below them records sort by prefix, so a record sits just before the records
        /// under it and a name's deepest records share a page.
        var stored: [UInt8] { [UInt8(ascii: "S"), min(level, Self.firstSharedLevel)] + prefix.bytes + [level] }

        /// The first level whose records sort with those under them.
        static let firstSharedLevel: UInt8 = 4

        /// The key stored as `bytes`; nil unless it is one.
        init?(stored bytes: UnsafeRawBufferPointer) {
            guard bytes.count == 35, bytes[0] == UInt8(ascii: "S"), bytes[34] < 64, bytes[1] == min(bytes[34], Self.firstSharedLevel),
                let prefix = SHA256Hash(UnsafeRawBufferPointer(rebasing: bytes[2..<34]))
            else { return nil }
            self.init(level: bytes[34], prefix: prefix)
        }

        init(level: UInt8, prefix: SHA256Hash) {
            self.level = level
            self.prefix = prefix
        }

        /// Whether `a` is stored before `b`.
        static func storedOrder(_ a: Key, _ b: Key) -> Bool {
            let (x, y) = (min(a.level, firstSharedLevel), min(b.level, firstSharedLevel))
            guard x == y else { return x < y }
            let order = PrefixTree.compare(a.prefix, b.prefix)
            return order != 0 ? order < 0 : a.level < b.level
        }
    }

    /// What a slot holds.
    enum Content: Equatable, Sendable {
        /// One name: its label and history.
        case leaf(label: SHA256Hash, history: PersonHistory)
        /// Two or more: the hash of the record one level down.
        case subtree(SHA256Hash)
    }

    /// The labels taking one next nibble.
    struct Slot: Equatable, Sendable {
        var nibble: UInt8
        var content: Content

        /// The hash of the labels it holds.
        var hash: SHA256Hash {
            switch content {
            case .leaf(let label, let history): return history.leafHash(label: label)
            case .subtree(let hash): return hash
            }
        }
    }

    /// The slots, by nibble.
    var slots: [Slot]

    /// Each slot: its nibble, then 0 and the label, count and chain (74 bytes in all), or 1 and
    /// the record below's hash (34 bytes).
    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(slots.count * 74)
        for slot in slots {
            bytes.append(slot.nibble)
            switch slot.content {
            case .leaf(let label, let history):
                bytes.append(0)
                bytes += label.bytes
                bytes += history.encoded
            case .subtree(let hash):
                bytes.append(1)
                bytes += hash.bytes
            }
        }
        return bytes
    }

    init(slots: [Slot]) {
        self.slots = slots
    }

    /// The record stored as `bytes`; nil unless its slots are well formed and rise by nibble.
    init?(encoded bytes: UnsafeRawBufferPointer) {
        var slots: [Slot] = []
        var at = 0
        while at < bytes.count {
            guard bytes.count - at >= 34, bytes[at] < 16, slots.last.map({ $0.nibble < bytes[at] }) ?? true else { return nil }
            let nibble = bytes[at]
            switch bytes[at + 1] {
            case 0:
                guard bytes.count - at >= 74, let label = SHA256Hash(UnsafeRawBufferPointer(rebasing: bytes[(at + 2)...])),
                    let history = PersonHistory(encoded: UnsafeRawBufferPointer(rebasing: bytes[(at + 34)..<(at + 74)]))
                else { return nil }
                slots.append(Slot(nibble: nibble, content: .leaf(label: label, history: history)))
                at += 74
            case 1:
                slots.append(Slot(nibble: nibble, content: .subtree(SHA256Hash(UnsafeRawBufferPointer(rebasing: bytes[(at + 2)...]))!)))
                at += 34
            default:
                return nil
            }
        }
        guard !slots.isEmpty else { return nil }
        self.slots = slots
    }

    /// The hash of the labels under the record, whose prefix has `level` nibbles.
    func hash(level: UInt8) -> SHA256Hash {
        let hashes = slots.map(\.hash)
        return hash(0..<slots.count, level: level, hashes: hashes)
    }

    /// The branches inside the record on the way to the slot of `nibble`, from the top down:
    /// each depth and the other side's hash.
    func steps(level: UInt8, toward nibble: UInt8) -> [PrefixTree.Step] {
        let hashes = slots.map(\.hash)
        var steps: [PrefixTree.Step] = []
        var range = 0..<slots.count
        while range.count > 1 {
            let (bit, split) = branch(in: range)
            let depth = level * 4 + bit
            if (nibble >> (3 - bit)) & 1 == 1 {
                steps.append(PrefixTree.Step(depth: depth, sibling: hash(range.lowerBound..<split, level: level, hashes: hashes)))
                range = split..<range.upperBound
            } else {
                steps.append(PrefixTree.Step(depth: depth, sibling: hash(split..<range.upperBound, level: level, hashes: hashes)))
                range = range.lowerBound..<split
            }
        }
        return steps
    }

    // MARK: Inside

    private func hash(_ range: Range<Int>, level: UInt8, hashes: [SHA256Hash]) -> SHA256Hash {
        guard range.count > 1 else { return hashes[range.lowerBound] }
        let (bit, split) = branch(in: range)
        return PrefixTree.branchHash(
            depth: level * 4 + bit, hash(range.lowerBound..<split, level: level, hashes: hashes),
            hash(split..<range.upperBound, level: level, hashes: hashes))
    }

    /// The first bit of the nibble (0 to 3, from the highest) where the slots of `range` differ,
    /// and the first slot with it set. The slots rise, so the first and last differ there first.
    private func branch(in range: Range<Int>) -> (bit: UInt8, split: Int) {
        let first = slots[range.lowerBound].nibble
        let last = slots[range.upperBound - 1].nibble
        let bit = UInt8((first ^ last).leadingZeroBitCount - 4)
        let split = range.first { (slots[$0].nibble >> (3 - bit)) & 1 == 1 }!
        return (bit, split)
    }
}
