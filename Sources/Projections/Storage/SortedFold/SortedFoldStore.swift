import Basics
import LMDB
import Ledger
import LogEngine

/// Where a sorted fold (``SortedFold``) writes: the fold's current state in memory made for it
/// (``WorkingState``), which it reads back, and every record the projections keep to a
/// ``RunBuffer``, never read until the runs are merged: the history (`user_versions` and
/// `user_links`, keyed with the sequence that wrote them, each user version encoded once for
/// both), the windows, and each change to `migrated_order` as an operation that the merge
/// applies in order (``FoldedEntries``). Folds by the same rules as ``LMDBProjectionStore``
/// (``UserFold``), and what its runs merge to is what that store writes, entry for entry.
final class SortedFoldStore: ProjectionStore {
    private let state: WorkingState
    private let runs: RunBuffer
    /// The identifiers linked by the update being folded, all to the user it puts next: each is
    /// kept in the working state once that user's record says whether it holds it.
    private var pendingLinks: [Identifier] = []
    /// The users decoded last (the fold reads a user several times an event, and the events
    /// after it often touch it again), newest last.
    private var decoded: [UserState] = []
    /// Numbers the `migrated_order` operations of one event in the order made.
    private var operations: UInt32 = 0

    init(state: WorkingState, runs: RunBuffer) {
        self.state = state
        self.runs = runs
    }

    /// Folds `events` in order.
    func fold(_ events: [RecordedEvent]) throws {
        let fold = UserFold(store: self)
        for event in events {
            operations = 0
            try fold.fold(event)
        }
    }

    func userKey(for identifier: Identifier) throws -> UInt64? {
        try state.userKey(for: identifier.indexKey) { key in try user(key)?.ids[identifier.kind] == identifier.value }
    }

    func user(_ key: UInt64) throws -> UserState? {
        if let index = decoded.lastIndex(where: { $0.key == key }) { return decoded[index] }
        guard let (value, sequence) = state.record(key) else { return nil }
        let user = try ProjectionDatabases.versionKey(key, sequence).withUnsafeBytes { try UserStateCodec.decode(key: $0, value: value) }
        remember(user)
        return user
    }

    private func remember(_ user: UserState) {
        decoded.removeAll { $0.key == user.key }
        if decoded.count == 4 { decoded.removeFirst() }
        decoded.append(user)
    }

    func link(_ identifier: Identifier, to key: UInt64, at sequence: UInt64) throws {
        runs.add(.userLinks, key: ProjectionDatabases.linkKey(identifier, sequence), value: BigEndian.bytes(key))
        pendingLinks.append(identifier)
    }

    func put(_ user: UserState) throws {
        let sequence = user.lastSequence
        try reorder(user.key, from: try self.user(user.key).flatMap(MigratedOrder.time), to: MigratedOrder.time(of: user), at: sequence)
        let value = UserStateCodec.encode(user, sequence: sequence)
        runs.add(.userVersions, key: ProjectionDatabases.versionKey(user.key, sequence), value: value)
        try state.setRecord(user.key, value: value, sequence: sequence)
        remember(user)
        for identifier in pendingLinks {
            try state.link(identifier.indexKey, to: user.key, confirmed: user.ids[identifier.kind] == identifier.value)
        }
        pendingLinks.removeAll(keepingCapacity: true)
    }

    func remove(_ key: UInt64, at sequence: UInt64) throws {
        try reorder(key, from: try user(key).flatMap(MigratedOrder.time), to: nil, at: sequence)
        runs.add(.userVersions, key: ProjectionDatabases.versionKey(key, sequence), value: [])
        state.removeRecord(key)
        decoded.removeAll { $0.key == key }
    }

    /// A user's listing time changes: its `migrated_order` entry under the old time is closed
    /// at `sequence`, the one under the new time opened (``MigratedOrder``), as operations the
    /// merge applies in order.
    private func reorder(_ user: UInt64, from old: Timestamp?, to new: Timestamp?, at sequence: UInt64) throws {
        guard old != new else { return }
        if let old { addOperation(.close, ProjectionDatabases.orderKey(old, user), at: sequence) }
        if let new { addOperation(.open, ProjectionDatabases.orderKey(new, user), at: sequence) }
    }

    private func addOperation(_ operation: OrderOperation, _ key: [UInt8], at sequence: UInt64) {
        operations += 1
        var operationKey = key
        BigEndian.append(sequence, to: &operationKey)
        BigEndian.append(UInt64(operations), to: &operationKey)
        runs.add(.migratedOrder, key: operationKey, value: [operation.rawValue])
    }

    func allocateUserKey() throws -> UInt64 {
        try state.newUser()
    }

    func setWindow(_ window: TransferWindow) throws {
        runs.add(.windows, key: BigEndian.bytes(window.sequence), value: window.encoded)
    }

    /// The checkpoint is the fold's head (``SortedFold/state``).
    func setCheckpoint(_ sequence: UInt64) throws {}
}

/// A change to one `migrated_order` entry, as a sorted fold's runs hold it: the entry's key,
/// the sequence and a count within the event, then this byte.
enum OrderOperation: UInt8 {
    case close = 0
    case open = 1

    /// The key of the entry an operation's run key changes (its first 16 bytes).
    static let entryKeyLength = 16
    /// An operation's run key: the entry's key, the sequence, the count.
    static let keyLength = 32

    /// `value` with this operation applied at `sequence`.
    func applied(to value: [UInt8], at sequence: UInt64) throws -> [UInt8] {
        switch self {
        case .open: try MigratedOrder.opening(value, at: sequence)
        case .close: try MigratedOrder.closing(value, at: sequence)
        }
    }
}
