import LMDB
import Ledger

/// Which generation of projection databases is in use, and the steps of a rebuild into the
/// other one: begin (empty it, or continue an interrupted rebuild), fold, switch.
enum ProjectionGenerations {
    /// The generation `transaction` sees in use (0 until a rebuild has switched).
    static func current(in transaction: ReadTransaction, root: Database) throws -> UInt64 {
        try transaction.get(root, key: ProjectionDatabases.generationKey).map { BigEndian.uint64($0) } ?? 0
    }

    /// Empties a generation: its folded data and its checkpoint and user-key counter.
    static func empty(_ databases: ProjectionDatabases, in transaction: WriteTransaction) throws {
        for database in databases.data { try transaction.clear(database) }
        for key in [ProjectionDatabases.checkpointKey, ProjectionDatabases.nextUserKey] { try transaction.delete(databases.state, key: key) }
    }

    /// The generation a rebuild folds into: the one after the current, emptied, unless a
    /// rebuild into it was interrupted, which then continues from its own checkpoint.
    static func beginRebuild(in transaction: WriteTransaction, root: Database, generations: (UInt64) -> ProjectionDatabases) throws -> ProjectionDatabases {
        let target = generations(try current(in: transaction, root: root) + 1)
        let pending = try transaction.get(root, key: ProjectionDatabases.rebuildingKey).map { BigEndian.uint64($0) }
        if pending != target.generation {
            try empty(target, in: transaction)
            try transaction.put(root, key: ProjectionDatabases.rebuildingKey, value: BigEndian.bytes(target.generation))
        }
        return target
    }

    /// Whether a rebuild into `target` is still under way (not finished or replaced by another).
    static func isRebuilding(_ target: ProjectionDatabases, in transaction: ReadTransaction, root: Database) throws -> Bool {
        try transaction.get(root, key: ProjectionDatabases.rebuildingKey).map { BigEndian.uint64($0) } == target.generation
            && current(in: transaction, root: root) != target.generation
    }

    /// Makes `target` the generation in use and empties the one it replaces, in `transaction`.
    static func switchTo(_ target: ProjectionDatabases, in transaction: WriteTransaction, root: Database, generations: (UInt64) -> ProjectionDatabases) throws {
        let previous = generations(try current(in: transaction, root: root))
        try transaction.put(root, key: ProjectionDatabases.generationKey, value: BigEndian.bytes(target.generation))
        try transaction.delete(root, key: ProjectionDatabases.rebuildingKey)
        try empty(previous, in: transaction)
    }
}
