/// Keeps every committed put, grouped by transaction, so a benchmark can replay the exact
/// writes through raw `mdb_put` as a baseline.
@_spi(Benchmark)
public final class WriteRecorder: @unchecked Sendable {
    /// One recorded put.
    public struct Put: Sendable {
        public let database: Database
        public let key: [UInt8]
        public let value: [UInt8]
        public let flags: PutFlags
    }

    /// The puts of each committed transaction, in order.
    public private(set) var transactions: [[Put]] = []
    private var current: [Put] = []

    public init() {}

    func put(_ database: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: PutFlags) {
        current.append(Put(database: database, key: Array(key), value: Array(value), flags: flags))
    }

    func commit() {
        transactions.append(current)
        current = []
    }

    func abort() { current = [] }
}
