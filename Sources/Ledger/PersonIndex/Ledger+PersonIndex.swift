import Basics
import LMDB
import LogEngine

extension Ledger {
    /// Brings the person index up to the log's head, `eventsPerBackgroundTransaction` events a
    /// transaction (so its first build, from an older ledger, holds bounded memory), and returns
    /// it as it then stands. Events appended meanwhile are left to the next call.
    @discardableResult
    public func updatePersonIndex() throws -> PersonIndexState {
        try Self.updatePersonIndex(environment: environment, schema: schema)
    }

    static func updatePersonIndex(environment: Environment, schema: LedgerSchema) throws -> PersonIndexState {
        while true {
            let (state, done) = try environment.write { txn in try extendPersonIndex(LogView(txn, schema: schema), txn: txn) }
            if done { return state }
        }
    }

    /// Adds the empty `person_index` database to a ledger written before it (the upgrade then
    /// builds the index: ``buildPersonIndexIfMissing(environment:schema:)``); true when it did.
    static func addPersonIndexDatabase(on environment: Environment) throws -> Bool {
        let present = try environment.read { txn in
            do {
                _ = try txn.openDatabase("person_index", create: false)
                return true
            } catch let error as LMDBError where error.code == .notFound { return false }
        }
        if !present { try environment.write { txn in _ = try txn.openDatabase("person_index", create: true) } }
        return !present
    }

    /// Builds the person index of a ledger that has none (one written before it, or in an
    /// earlier layout, or a first build cut short), as a writable open does; returns how many
    /// events it indexed, nil when there was nothing to build.
    ///
    /// The build reads the log in short read transactions and holds the tree in memory (about
    /// 100 bytes a name), then writes every record once, in key order, in one transaction with
    /// the state and the layout: a build cut short leaves nothing behind and starts again.
    static func buildPersonIndexIfMissing(environment: Environment, schema: LedgerSchema) throws -> UInt64? {
        guard let database = schema.personIndex else { return nil }
        let layout = try environment.read { txn in try txn.get(database, key: LogView.personIndexBuiltKey) }
        guard layout != LogView.personIndexLayout else { return nil }
        let built = PersonIndexRecomputation()
        let head = try environment.read { txn in try LogView(txn, schema: schema).head().sequence }
        try personIndexAdditions(environment: environment, schema: schema, from: 1, through: head) { additions, last in
            try built.add(additions, through: last)
        }
        let root = try built.root()
        try environment.write { txn in
            try txn.clear(database)
            _ = try txn.put(database, key: LogView.personIndexBuiltKey, value: LogView.personIndexLayout)
            _ = try txn.put(
                database, key: LogView.personIndexStateKey, value: PersonIndexState(indexedSize: built.size, names: built.names, root: root).encoded)
            for (key, record) in built.recordsInStoredOrder() {
                _ = try txn.put(database, key: key.stored, value: record.encoded, flags: .append)
            }
        }
        return built.size
    }

    /// Brings the person index up to the head and, when it holds a name and its root is not the
    /// one the latest "person index committed" holds, appends a new one: what `handover checkpoint` does before
    /// signing, so that the checkpoint covers the index of every event before it. Returns the
    /// event appended, if any.
    @discardableResult
    public func commitPersonIndex() async throws -> PersonIndexCommitted? {
        let state = try updatePersonIndex()
        let root = Hex.encode(state.root.bytes)
        let latest = try read { try $0.personIndexCommit(atOrBefore: UInt64.max) }
        // An index naming no one proves nothing: the first commit waits for a name.
        guard state.names > 0, latest?.body.root != root else { return nil }
        let body = PersonIndexCommitted(indexedSize: Int(state.indexedSize), root: root, names: Int(state.names))
        _ = try await append(
            EventDraft(.personIndexCommitted(body), idempotencyKey: PersonIndexCommitted.idempotencyKey(indexedSize: body.indexedSize)))
        return body
    }

    /// Signs a checkpoint after committing the person index, so the checkpoint covers it.
    public func commitIndexAndSignCheckpoint(with key: CheckpointKey) async throws -> Checkpoint {
        try await commitPersonIndex()
        return try signCheckpoint(with: key)
    }

    /// Drops the person index; ``rebuildPersonIndex()`` (or the next writable open) builds it again
    /// from the first event.
    public func dropPersonIndex() throws {
        guard let database = schema.personIndex else { return }
        try environment.write { txn in try txn.clear(database) }
    }

    /// Builds a dropped person index again to the head, marking it built.
    public func rebuildPersonIndex() throws -> PersonIndexState {
        _ = try Self.buildPersonIndexIfMissing(environment: environment, schema: schema)
        return try read { try $0.personIndexState() } ?? PersonIndexState(indexedSize: 0, names: 0, root: PrefixTree.emptyRoot)
    }

    /// Adds up to `eventsPerBackgroundTransaction` events after the index's size to it in `txn`;
    /// returns the state and whether it reached the head.
    private static func extendPersonIndex(_ view: LogView, txn: WriteTransaction) throws -> (PersonIndexState, Bool) {
        guard let database = view.schema.personIndex, let stored = try view.personIndexState(),
            try txn.get(database, key: LogView.personIndexBuiltKey) == LogView.personIndexLayout
        else {
            throw LedgerError(.needsUpgrade, "it has no person index yet")
        }
        let head = try view.head().sequence
        let last = min(head, stored.indexedSize + eventsPerBackgroundTransaction)
        var additions: [PrefixTree.Addition] = []
        try view.personIndexEntries(from: stored.indexedSize + 1, through: last) { entry in
            additions.append(PrefixTree.Addition(entry))
        }
        let tree = view.personIndexTree(writingTo: txn)
        let state = PersonIndexState(indexedSize: last, names: stored.names + (try tree.add(additions)), root: try tree.rootHash())
        _ = try txn.put(database, key: LogView.personIndexStateKey, value: state.encoded)
        return (state, last == head)
    }
}
