import LMDB
import Ledger
import LogEngine

/// What a fold of the whole log (a rebuild, `verify --deep`, the upgrade's load) will take,
/// worked out before it starts from what the ledger holds: its users, its working state
/// (``SortedFold/bytesPerUser`` each) against the memory budget, and the scratch directory's
/// disk.
public struct FoldPlan: Sendable {
    /// The users the fold will make: those of the projections in use, or, where there are none
    /// yet, at most the log's events.
    public let users: Int64
    /// The working state's bytes.
    public let working: Int64
    /// The part of them beyond the budget, kept in the scratch directory.
    public let spilled: Int64
    /// The sorted runs' bytes in the scratch directory: about the projections' size, or half the
    /// log's where there are none yet to go by.
    public let runs: Int64
    /// The memory budget the plan was made for.
    public let memory: Int

    init(for ledger: Environment, schema: LedgerSchema, memory: Int) throws {
        let (log, projections, users) = try ledger.read { txn -> (Int64, Int64, Int64) in
            let head = try LogView(txn, schema: schema).head().sequence
            var bytes: Int64 = 0
            var users: UInt64?
            for generation in [0, 1] as [UInt64] {
                guard let databases = try? ProjectionDatabases.open(generation: generation, in: txn, create: false) else { continue }
                let size = try ProjectionTable.allCases.reduce(Int64(0)) { $0 + Int64(try txn.bytes(of: databases.database($1))) }
                bytes = max(bytes, size)
                if let next = try txn.get(databases.state, key: ProjectionDatabases.nextUserKey), next.count == 8 {
                    users = max(users ?? 0, try BigEndian.uint64(next) - 1)
                }
            }
            return (Int64(try txn.bytes(of: schema.log)), bytes, Int64(min(users ?? head, UInt64(Int64.max / 1024))))
        }
        self.users = users
        self.memory = memory
        working = users * Int64(SortedFold.bytesPerUser)
        spilled = max(0, working - Int64(memory - SortedFold.runMemory(of: memory)))
        runs = max(projections, log / 2)
    }
}

extension UserProjection {
    /// What a fold of `ledger`'s whole log in `memory` bytes will take (``FoldPlan``).
    public func foldPlan(_ ledger: Ledger, memory: Int) throws -> FoldPlan {
        try FoldPlan(for: ledger.environment, schema: ledger.schema, memory: memory)
    }
}
