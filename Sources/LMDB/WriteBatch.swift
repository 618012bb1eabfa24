/// Writes gathered without a write transaction, to be applied in one later, in the order they
/// were made: what lets a group commit work out its writes while the commit before it is
/// still being flushed, leaving the transaction only the puts.
public struct WriteBatch: Sendable {
    private enum Operation: Sendable {
        case put(Database, key: [UInt8], value: [UInt8], flags: PutFlags)
        case delete(Database, key: [UInt8])
    }

    private var operations: [Operation] = []

    /// An empty batch.
    public init() {}

    /// Gathers a put of `value` under `key` (``WriteTransaction/put(_:key:value:flags:)``).
    public mutating func put(_ database: Database, key: [UInt8], value: [UInt8], flags: PutFlags = []) {
        operations.append(.put(database, key: key, value: value, flags: flags))
    }

    /// Gathers a delete of `key` (``WriteTransaction/delete(_:key:)``).
    public mutating func delete(_ database: Database, key: [UInt8]) {
        operations.append(.delete(database, key: key))
    }

    /// Appends `other`'s writes after these.
    public mutating func append(_ other: WriteBatch) {
        operations.append(contentsOf: other.operations)
    }

    /// Makes every write in `transaction`, in order.
    public func apply(to transaction: WriteTransaction) throws {
        for operation in operations {
            switch operation {
            case .put(let database, let key, let value, let flags): try transaction.put(database, key: key, value: value, flags: flags)
            case .delete(let database, let key): try transaction.delete(database, key: key)
            }
        }
    }
}
