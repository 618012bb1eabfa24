import Basics
import LMDB
import LogEngine

/// The person index as the ledger stores it (``LedgerSchema/personIndex``): the size it covers,
/// how many names it holds, and its tree.
public struct PersonIndexState: Equatable, Sendable {
    /// How many events, from the first, it covers.
    public var indexedSize: UInt64
    /// How many names it holds.
    public var names: UInt64
    public var root: SHA256Hash

    /// The 48 bytes stored: size, names, root.
    var encoded: [UInt8] { BigEndian.bytes(indexedSize) + BigEndian.bytes(names) + root.bytes }
}

extension LogView {
    /// The index's state: u64 events covered ‖ u64 names ‖ root hash (48 bytes).
    static let personIndexStateKey: [UInt8] = [UInt8(ascii: "R")]
    /// The layout the index was built in, once built to the head: `B`, holding ``personIndexLayout``.
    static let personIndexBuiltKey: [UInt8] = [UInt8(ascii: "B")]
    /// The layout of ``PrefixTreeRecord``s. An index built in another (the binary branches of
    /// the first builds) is built again at the next writable open.
    static let personIndexLayout: [UInt8] = [2]

    /// The person index as stored: nil when the ledger has no index database yet (`handover
    /// upgrade` adds it); an index not yet built covers no event.
    public func personIndexState() throws -> PersonIndexState? {
        guard let database = schema.personIndex else { return nil }
        guard let raw = try transaction.get(database, key: Self.personIndexStateKey) else {
            return PersonIndexState(indexedSize: 0, names: 0, root: PrefixTree.emptyRoot)
        }
        guard raw.count == 48, let size = try? BigEndian.uint64(raw), let names = try? BigEndian.uint64(raw, at: 8),
            let root = raw.withUnsafeBytes({ SHA256Hash(UnsafeRawBufferPointer(rebasing: $0[16...])) })
        else {
            guard raw.count == 16 || raw.count == 50 else {
                throw LedgerError(.malformedRecord, "the person index's state is \(raw.count) bytes, not 48")
            }
            throw LedgerError(.needsUpgrade, "its person index is in an earlier layout (handover upgrade builds it again)")
        }
        return PersonIndexState(indexedSize: size, names: names, root: root)
    }

    /// The index's tree as stored, read through this view's transaction (and written through
    /// `write`, when given).
    func personIndexTree(writingTo write: WriteTransaction? = nil) -> PrefixTree {
        let database = schema.personIndex
        return PrefixTree(
            load: { key in
                guard let database, let raw = try self.transaction.get(database, key: key.stored) else { return nil }
                guard let record = raw.withUnsafeBytes({ PrefixTreeRecord(encoded: $0) }) else {
                    throw LedgerError(
                        .malformedRecord,
                        "the person index's record under the \(key.level)-nibble prefix \(Hex.encode(key.prefix.bytes)) is malformed")
                }
                return record
            },
            save: { key, record in
                guard let database, let write else { throw LedgerError(.readOnly, "the person index is written only by a writer") }
                _ = try write.put(database, key: key.stored, value: record.encoded)
            })
    }

    /// `name`'s proof in the index as stored; nil when the index does not hold it.
    public func personIndexProof(of name: PersonName) throws -> PersonIndexProof? {
        guard try personIndexState() != nil, let (history, steps) = try personIndexTree().proof(of: name.label) else { return nil }
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
            let raw = try storedRecord(sequence)
            let event = try withStoredRows(LogView.decode(raw, sequence: sequence))
            for entry in PersonIndexEntry.entries(of: event, leaf: MerkleHash.leafHash(storedRecord: raw)) { try body(entry) }
        }
    }

    /// What `event`, decoded from this view's log (its rows attached here if not yet), adds to
    /// the index, its leaf hash read from its stored record.
    func personIndexEntries(of event: RecordedEvent) throws -> [PersonIndexEntry] {
        PersonIndexEntry.entries(of: try withStoredRows(event), leaf: MerkleHash.leafHash(storedRecord: try storedRecord(event.sequence)))
    }

    private func storedRecord(_ sequence: UInt64) throws -> UnsafeRawBufferPointer {
        guard let raw = try record(sequence) else { throw LedgerError(.malformedRecord, "event \(sequence) is missing from the log") }
        return raw
    }
}
