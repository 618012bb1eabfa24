import Ledger

/// The records a fold writes, gathered in memory up to a budget, then sorted and written out
/// as one run (``spill(to:)``); the last run is merged straight from memory (``sortedRun()``).
///
/// A key written twice keeps its last value, as a put in LMDB does: the sort keeps the order
/// of writing among equal keys, and only the last of them is kept.
final class RunBuffer {
    /// The records, one after another (``RunRecord``); `count` bytes of it used.
    private var storage: UnsafeMutableRawBufferPointer
    private var count = 0
    private var offsets: [Int] = []
    /// The bytes gathered before the buffer counts as full.
    let budget: Int

    init(budget: Int) {
        self.budget = budget
        storage = .allocate(byteCount: 1 << 20, alignment: 8)
    }

    deinit { storage.deallocate() }

    /// Whether the buffer holds its budget or more.
    var isFull: Bool { count >= budget }

    /// Gathers `value` under `key` in `table`.
    func add(_ table: ProjectionTable, key: [UInt8], value: [UInt8]) {
        let length = RunRecord.headerSize + 1 + key.count + value.count
        if count + length > storage.count {
            // Doubled while under the budget, so a small fold holds little; past it (the chunk
            // that crosses the budget) by half.
            let grown = storage.count < budget ? min(storage.count * 2, budget / 16 * 17) : storage.count / 2 * 3
            let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: max(grown, count + length), alignment: 8)
            larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[..<count]))
            storage.deallocate()
            storage = larger
        }
        offsets.append(count)
        RunRecord.write(table: table, key: key, value: value, to: UnsafeMutableRawBufferPointer(rebasing: storage[count...]))
        count += length
    }

    /// The offsets of the records in order, the last of equal keys only.
    private func sortedOffsets() -> [Int] {
        let all = UnsafeRawBufferPointer(storage)
        func sortKey(_ offset: Int) -> UnsafeRawBufferPointer {
            let count = Int(all.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            return UnsafeRawBufferPointer(rebasing: all[(offset + RunRecord.headerSize)..<(offset + RunRecord.headerSize + count)])
        }
        // Most comparisons end at the sort keys' first eight bytes, compared as one number.
        var keyed = offsets.map { (prefix: RunRecord.prefix(of: sortKey($0)), offset: $0) }
        keyed.sort { a, b in
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            let order = RunRecord.compare(sortKey(a.offset), sortKey(b.offset))
            return order != 0 ? order < 0 : a.offset < b.offset
        }
        var kept: [Int] = []
        kept.reserveCapacity(keyed.count)
        for (_, offset) in keyed {
            if let last = kept.last, RunRecord.compare(sortKey(last), sortKey(offset)) == 0 {
                kept[kept.count - 1] = offset
            } else {
                kept.append(offset)
            }
        }
        return kept
    }

    /// Writes the records, sorted, to the new file `path`, and empties the buffer.
    func spill(to path: String) throws {
        let writer = try RunFileWriter(path: path)
        let all = UnsafeRawBufferPointer(storage)
        for offset in sortedOffsets() {
            guard let record = RunRecord.read(UnsafeRawBufferPointer(rebasing: all[offset..<count])) else { continue }
            try writer.append(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + record.length)]))
        }
        try writer.finish()
        count = 0
        offsets.removeAll(keepingCapacity: true)
    }

    /// The records, sorted, as a run read from memory, which takes the buffer's memory over;
    /// the buffer is empty after.
    func sortedRun() -> SortedRun {
        let run = MemoryRun(storage: storage, count: count, offsets: sortedOffsets())
        storage = .allocate(byteCount: 1 << 20, alignment: 8)
        count = 0
        offsets = []
        return run
    }
}

/// A sorted run held in memory (the last records of a fold, never written to a file).
final class MemoryRun: SortedRun {
    private let storage: UnsafeMutableRawBufferPointer
    private let count: Int
    private let offsets: [Int]
    private var index = 0
    private(set) var current: (sortKey: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?

    /// A run of the records at `offsets` in the first `count` bytes of `storage`, which it
    /// owns from now on.
    init(storage: UnsafeMutableRawBufferPointer, count: Int, offsets: [Int]) {
        self.storage = storage
        self.count = count
        self.offsets = offsets
        load()
    }

    deinit { storage.deallocate() }

    func advance() throws {
        index += 1
        load()
    }

    private func load() {
        guard index < offsets.count, let record = RunRecord.read(UnsafeRawBufferPointer(rebasing: storage[offsets[index]..<count])) else {
            current = nil
            return
        }
        current = (record.sortKey, record.value)
    }
}

/// Sorted runs merged into one stream in order; where runs hold the same key, the later run's
/// record is kept (it was written later), as a put in LMDB keeps the last value.
final class RunMerge {
    private let runs: [SortedRun]
    /// Indexes of the runs with a current record, a binary min-heap by (sort key, run index).
    private var heap: [Int] = []
    /// The run whose record was returned last, advanced at the next call.
    private var returned: Int?

    /// Merges `runs`, given in the order they were written.
    init(_ runs: [SortedRun]) {
        self.runs = runs
        for index in runs.indices where runs[index].current != nil { push(index) }
    }

    /// The next record: its table, key and value, valid until the next call; nil after the last.
    func next() throws -> (table: UInt8, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
        if let returned {
            try runs[returned].advance()
            if runs[returned].current != nil { push(returned) }
            self.returned = nil
        }
        guard var winner = pop() else { return nil }
        // Equal keys come off the heap in the order their runs were written: the last one wins.
        while let top = heap.first, RunRecord.compare(runs[top].current!.sortKey, runs[winner].current!.sortKey) == 0 {
            _ = pop()
            try runs[winner].advance()
            if runs[winner].current != nil { push(winner) }
            winner = top
        }
        returned = winner
        let (sortKey, value) = runs[winner].current!
        return (sortKey[0], UnsafeRawBufferPointer(rebasing: sortKey[1...]), value)
    }

    private func precedes(_ a: Int, _ b: Int) -> Bool {
        let order = RunRecord.compare(runs[a].current!.sortKey, runs[b].current!.sortKey)
        return order != 0 ? order < 0 : a < b
    }

    private func push(_ run: Int) {
        heap.append(run)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func pop() -> Int? {
        guard let top = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count, precedes(heap[left], heap[smallest]) { smallest = left }
                if right < heap.count, precedes(heap[right], heap[smallest]) { smallest = right }
                guard smallest != parent else { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }
}
