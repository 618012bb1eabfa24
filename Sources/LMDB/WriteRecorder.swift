/// Keeps every committed put, grouped by transaction, so a benchmark can replay the exact
/// writes through raw `mdb_put` as a baseline. Keys and values are copied end to end into one
/// growing buffer, so recording costs the ledger a copy per put and no allocation.
@_spi(Benchmark)
///
/// `@unchecked Sendable`, without a lock: only the environment's one writing thread records,
/// and what was recorded is read once writing has stopped.
public final class WriteRecorder: @unchecked Sendable {
    /// One recorded put: its database, flags and where its key and value lie in ``bytes``.
    public struct Put: Sendable {
        public let database: Database
        public let key: Range<Int>
        public let value: Range<Int>
        public let flags: PutFlags
    }

    /// Every recorded key and value, end to end.
    public private(set) var bytes: [UInt8] = []
    /// Every put of the committed transactions, in order.
    public private(set) var puts: [Put] = []
    /// Each committed transaction's puts, as a range of ``puts``.
    public private(set) var transactions: [Range<Int>] = []
    private var transactionStart = 0
    private var bytesStart = 0

    public init() {}

    /// A recorder whose storage for `bytes` bytes and `puts` puts is allocated and touched
    /// before the measured writes, so that recording them costs a copy per put and neither a
    /// reallocation nor a page fault.
    public init(reservingBytes bytes: Int, puts: Int) {
        self.bytes = [UInt8](repeating: 0, count: bytes)
        self.bytes.removeAll(keepingCapacity: true)
        self.puts.reserveCapacity(puts)
        self.puts.append(
            contentsOf: repeatElement(Put(database: Database(handle: 0, name: "", flags: []), key: 0..<0, value: 0..<0, flags: []), count: puts))
        self.puts.removeAll(keepingCapacity: true)
    }

    func put(_ database: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: PutFlags) {
        let k = bytes.count
        bytes.append(contentsOf: key.assumingMemoryBound(to: UInt8.self))
        let v = bytes.count
        bytes.append(contentsOf: value.assumingMemoryBound(to: UInt8.self))
        puts.append(Put(database: database, key: k..<v, value: v..<bytes.count, flags: flags))
    }

    func commit() {
        transactions.append(transactionStart..<puts.count)
        transactionStart = puts.count
        bytesStart = bytes.count
    }

    func abort() {
        puts.removeSubrange(transactionStart...)
        bytes.removeSubrange(bytesStart...)
    }
}
