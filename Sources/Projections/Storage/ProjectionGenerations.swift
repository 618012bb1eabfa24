import LMDB
import Ledger
import LogEngine

/// Which generation of projection databases is in use, and the steps of a rebuild into the
/// other one: begin (empty it, or continue an interrupted rebuild), fold, switch.
enum ProjectionGenerations {
    /// The generation `transaction` sees in use (0 until a rebuild has switched).
    static func current(in transaction: ReadTransaction, root: Database) throws -> UInt64 {
        let generation = try transaction.get(root, key: ProjectionDatabases.generationKey).map { try BigEndian.uint64($0) } ?? 0
        // One more at each rebuild: a number near the top is an altered copy's, and has no next.
        guard generation < UInt64(Int64.max) else {
            throw LedgerError(.malformedRecord, "projection_state.generation is \(generation), beyond any count of rebuilds")
        }
        return generation
    }

    /// Empties a generation: its folded data and its checkpoint and user-key counter.
    static func empty(_ databases: ProjectionDatabases, in transaction: WriteTransaction) throws {
        for database in databases.data { try transaction.clear(database) }
        for key in [ProjectionDatabases.checkpointKey, ProjectionDatabases.nextUserKey] { try transaction.delete(databases.state, key: key) }
    }

    /// The generation a rebuild folds into: the one after the current, emptied, unless a
    /// rebuild into it was interrupted, which then continues from its own checkpoint.
    static func beginRebuild(
        in transaction: WriteTransaction, root: Database, generations: (UInt64) -> ProjectionDatabases
    ) throws -> ProjectionDatabases {
        let target = generations(try current(in: transaction, root: root) + 1)
        let pending = try transaction.get(root, key: ProjectionDatabases.rebuildingKey).map { try BigEndian.uint64($0) }
        if pending != target.generation {
            try empty(target, in: transaction)
            try transaction.put(root, key: ProjectionDatabases.rebuildingKey, value: BigEndian.bytes(target.generation))
        }
        return target
    }

    /// Whether ``beginRebuild(in:root:generations:)`` now would leave a generation nothing has
    /// been folded into, to be loaded whole: always, unless an interrupted rebuild has folded
    /// into its target, which then continues from its own checkpoint.
    static func rebuildLoads(in transaction: ReadTransaction, root: Database, generations: (UInt64) -> ProjectionDatabases) throws -> Bool {
        let target = generations(try current(in: transaction, root: root) + 1)
        guard try transaction.get(root, key: ProjectionDatabases.rebuildingKey).map({ try BigEndian.uint64($0) }) == target.generation else {
            return true
        }
        return try LMDBProjectionReader(transaction: transaction, databases: target).checkpoint() == 0
    }

    /// Whether a rebuild into `target` is still under way (not finished or replaced by another).
    static func isRebuilding(_ target: ProjectionDatabases, in transaction: ReadTransaction, root: Database) throws -> Bool {
        try transaction.get(root, key: ProjectionDatabases.rebuildingKey).map { try BigEndian.uint64($0) } == target.generation
            && current(in: transaction, root: root) != target.generation
    }

    /// Empties `target`, which nothing has been folded into yet (or whose load was
    /// interrupted), for a load in key order; returns the token that names this load.
    static func beginLoad(_ target: ProjectionDatabases, in transaction: WriteTransaction, root: Database) throws -> [UInt8] {
        try empty(target, in: transaction)
        var generator = SystemRandomNumberGenerator()
        let token = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        try transaction.put(root, key: ProjectionDatabases.loaderKey, value: token)
        return token
    }

    /// Throws unless the load named `token` into `target` is still the one under way: a rebuild
    /// begun by another process since then empties the generation and loads it itself.
    static func checkLoading(_ target: ProjectionDatabases, token: [UInt8], in transaction: ReadTransaction, root: Database) throws {
        guard try isRebuilding(target, in: transaction, root: root),
            try transaction.get(root, key: ProjectionDatabases.loaderKey) == token
        else {
            throw LedgerError(
                .takenOver, "another process began rebuilding the projections while this one loaded them; that one finishes the rebuild")
        }
    }

    /// Makes `target` the generation in use and empties the one it replaces, in `transaction`.
    static func switchTo(
        _ target: ProjectionDatabases, in transaction: WriteTransaction, root: Database, generations: (UInt64) -> ProjectionDatabases
    ) throws {
        let previous = generations(try current(in: transaction, root: root))
        try transaction.put(root, key: ProjectionDatabases.generationKey, value: BigEndian.bytes(target.generation))
        for key in [ProjectionDatabases.rebuildingKey, ProjectionDatabases.loaderKey] { try transaction.delete(root, key: key) }
        try empty(previous, in: transaction)
    }
}
