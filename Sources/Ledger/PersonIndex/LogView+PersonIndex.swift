import Basics
import LMDB

/// The person index as the ledger stores it (``LedgerSchema/personIndex``): the size it covers,
/// how many names it holds, and its tree.
public struct PersonIndexState: Equatable, Sendable {
    /// How many events, from the first, it covers.
    public var indexedSize: UInt64
    /// How many names it holds.
    public var names: UInt64
    public var root: SHA256Hash
}

extension LogView {
    static let personIndexStateKey: [UInt8] = [UInt8(ascii: "R")]
    /// Present once the index was first built to the head: `B`.
    static let personIndexBuiltKey: [UInt8] = [UInt8(ascii: "B")]

    /// The stored index's size, name count and root side; nil when the ledger has no index database.
    func storedPersonIndex() throws -> (indexedSize: UInt64, names: UInt64, root: PrefixTree.Ref?)? {
        guard let database = schema.personIndex else { return nil }
        guard let raw = try transaction.get(database, key: Self.personIndexStateKey) else { return (0, 0, nil) }
        guard raw.count == 16 || raw.count == 50, let size = try? BigEndian.uint64(raw), let names = try? BigEndian.uint64(raw, at: 8) else {
            throw LedgerError(.malformedRecord, "the person index's state is \(raw.count) bytes, not 16 or 50")
        }
        guard raw.count == 50 else { return (size, names, nil) }
        guard let root = raw.withUnsafeBytes({ PrefixTree.Ref(encoded: UnsafeRawBufferPointer(rebasing: $0[16...])) }) else {
            throw LedgerError(.malformedRecord, "the person index's root is not a leaf or a branch")
        }
        return (size, names, root)
    }

    /// The index's tree as stored, reading its nodes through this view's transaction.
    func personIndexTree(root: PrefixTree.Ref?) -> PrefixTree {
        let database = schema.personIndex
        return PrefixTree(
            root: root,
            loadNode: { key in
                guard let database, let raw = try self.transaction.get(database, key: key.stored) else { return nil }
                guard let node = raw.withUnsafeBytes({ PrefixTree.Node(encoded: $0) }) else {
                    throw LedgerError(.malformedRecord, "the person index's branch at depth \(key.depth) is \(raw.count) bytes, not 100")
                }
                return node
            },
            loadHistory: { label in
                guard let database, let raw = try self.transaction.get(database, key: [UInt8(ascii: "H")] + label.bytes) else { return nil }
                guard let history = raw.withUnsafeBytes({ PersonHistory(encoded: $0) }) else {
                    throw LedgerError(.malformedRecord, "the person index's history of \(Hex.encode(label.bytes)) is \(raw.count) bytes, not 40")
                }
                return history
            })
    }

    /// The person index as stored: nil when the ledger has none yet (`handover upgrade` builds it).
    public func personIndexState() throws -> PersonIndexState? {
        guard let stored = try storedPersonIndex() else { return nil }
        return PersonIndexState(indexedSize: stored.indexedSize, names: stored.names, root: try personIndexTree(root: stored.root).rootHash())
    }

    /// `name`'s proof in the index as stored; nil when the index does not hold it.
    public func personIndexProof(of name: PersonName) throws -> PersonIndexProof? {
        guard let stored = try storedPersonIndex(), let (history, steps) = try personIndexTree(root: stored.root).proof(of: name.label) else {
            return nil
        }
        return PersonIndexProof(name: name, history: history, steps: steps.map { ($0.depth, $0.sibling) })
    }

    /// The latest "person index committed" event at or before `last`, with its sequence number.
    public func personIndexCommit(atOrBefore last: UInt64) throws -> (sequence: UInt64, body: PersonIndexCommitted)? {
        for sequence in try sequences(of: .personIndexCommitted).reversed() where sequence <= last {
            guard case .personIndexCommitted(let body) = try eventAsLogged(sequence)?.body else { continue }
            return (sequence, body)
        }
        return nil
    }

    /// What events `first` to `last` add to the index, in order, each read as stored with its rows.
    func personIndexEntries(from first: UInt64, through last: UInt64, _ body: (PersonIndexEntry) throws -> Void) throws {
        guard first <= last else { return }
        for sequence in first...last {
            guard let raw = try record(sequence) else { throw LedgerError(.malformedRecord, "event \(sequence) is missing from the log") }
            let leaf = MerkleHash.leafHash(storedRecord: raw)
            let event = try withStoredRows(LogView.decode(raw, sequence: sequence))
            for entry in PersonIndexEntry.entries(of: event, leaf: leaf) { try body(entry) }
        }
    }
}
