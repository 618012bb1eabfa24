import Basics
import Dispatch
import LMDB
import LogEngine
import Synchronization

extension Ledger {
    /// What events `first` through `last` add to the person index, handed to `body` in log
    /// order, `eventsPerBackgroundTransaction` events at a time with the last one's sequence.
    /// Two such chunks are read and decoded at once, each in a read transaction of its own on a
    /// core of its own: reading and decoding the events is most of the index's first build and
    /// of its deep check.
    static func personIndexAdditions(
        environment: Environment, schema: LedgerSchema, from first: UInt64, through last: UInt64,
        _ body: ([PrefixTree.Addition], UInt64) throws -> Void
    ) throws {
        var start = first
        while start <= last {
            let ranges = (0..<2).compactMap { i -> ClosedRange<UInt64>? in
                let lower = start + UInt64(i) * eventsPerBackgroundTransaction
                return lower <= last ? lower...min(last, lower + eventsPerBackgroundTransaction - 1) : nil
            }
            let read = Mutex<[Int: Result<[PrefixTree.Addition], any Error>]>([:])
            DispatchQueue.concurrentPerform(iterations: ranges.count) { i in
                let result = Result {
                    try environment.read { txn in
                        var additions: [PrefixTree.Addition] = []
                        try LogView(txn, schema: schema).personIndexEntries(from: ranges[i].lowerBound, through: ranges[i].upperBound) {
                            additions.append(PrefixTree.Addition($0))
                        }
                        return additions
                    }
                }
                read.withLock { $0[i] = result }
            }
            let results = read.withLock { $0 }
            for (i, range) in ranges.enumerated() { try body(try results[i]!.get(), range.upperBound) }
            start = ranges.last!.upperBound + 1
        }
    }
}

extension PrefixTree.Addition {
    /// The addition of `entry`: its name's label, sequence and leaf.
    init(_ entry: PersonIndexEntry) {
        self.init(label: entry.name.label, sequence: entry.sequence, leaf: entry.leaf)
    }
}
