import Foundation
import TestSupport
import Testing

@testable import Projections

/// The sorted runs a fold's history is gathered in, and the scratch directories they live in.
@Suite("Sorted runs")
struct SortedRunTests {
    let dir = TemporaryDirectory()

    /// Every record of `merge`, as (table, key, value) strings.
    private func drain(_ merge: RunMerge) throws -> [String] {
        var all: [String] = []
        while let (table, key, value) = try merge.next() {
            all.append("\(table) \(String(decoding: key, as: UTF8.self))=\(String(decoding: value, as: UTF8.self))")
        }
        return all
    }

    private func buffer(_ records: [(ProjectionTable, String, String)]) -> RunBuffer {
        let buffer = RunBuffer(budget: 1 << 20)
        for (table, key, value) in records { buffer.add(table, key: Array(key.utf8), value: Array(value.utf8)) }
        return buffer
    }

    @Test(
        "runs from memory and from files merge in LMDB's key order, table by table; a key written again keeps its last value, within a run and across runs"
    )
    func mergeOrderAndLastWrite() throws {
        let first = buffer([(.userLinks, "b", "1"), (.userVersions, "ab", "1"), (.userVersions, "a", "1"), (.userVersions, "a", "2")])
        try first.spill(to: dir.sub("run-0"))
        let second = buffer([(.userVersions, "ab", "3"), (.userVersions, "", "x"), (.userLinks, "a", "4")])
        try second.spill(to: dir.sub("run-1"))
        let last = buffer([(.userLinks, "b", "5"), (.userVersions, "c", "6"), (.userLinks, "b", "7")])
        let runs: [SortedRun] = [
            try RunFileReader(path: dir.sub("run-0"), bufferSize: 1), try RunFileReader(path: dir.sub("run-1"), bufferSize: 4096), last.sortedRun(),
        ]
        #expect(try drain(RunMerge(runs)) == ["0 =x", "0 a=2", "0 ab=3", "0 c=6", "1 a=4", "1 b=7"])
    }

    @Test("runs sort keys of every length, zero bytes and shared prefixes among them, in LMDB's order, the last write of a key kept")
    func sortByPrefix() throws {
        var generator = SystemRandomNumberGenerator()
        var records: [(key: [UInt8], value: [UInt8])] = []
        for index in 0..<5_000 {
            let length = Int.random(in: 0...12, using: &generator)
            // Few distinct bytes, so keys share their first eight and differ after, or only in length.
            let key = (0..<length).map { _ in [0, 1, 255][Int.random(in: 0...2, using: &generator)] as UInt8 }
            records.append((key, Array(String(index).utf8)))
        }
        let buffer = RunBuffer(budget: 1 << 20)
        for record in records { buffer.add(.userVersions, key: record.key, value: record.value) }
        var expected: [[UInt8]: [UInt8]] = [:]
        for record in records { expected[record.key] = record.value }
        let ordered = expected.keys.sorted { $0.lexicographicallyPrecedes($1) }
        var merged: [([UInt8], [UInt8])] = []
        let merge = RunMerge([buffer.sortedRun()])
        while let (_, key, value) = try merge.next() { merged.append((Array(key), Array(value))) }
        #expect(merged.count == ordered.count)
        let misplaced = zip(merged.map(\.0), ordered).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(misplaced == nil, "first key out of order at \(misplaced?.offset ?? -1)")
        #expect(merged.allSatisfy { expected[$0.0] == $0.1 })
    }

    @Test("a record larger than a reader's buffer is read whole; a run file cut inside a record is refused, not read short")
    func largeAndCutRecords() throws {
        let large = String(repeating: "v", count: 200_000)
        try buffer([(.userVersions, "k", large), (.userVersions, "l", "small")]).spill(to: dir.sub("large"))
        #expect(try drain(RunMerge([try RunFileReader(path: dir.sub("large"), bufferSize: 4096)])) == ["0 k=\(large)", "0 l=small"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: dir.sub("large")))
        try bytes.dropLast(3).write(to: URL(fileURLWithPath: dir.sub("cut")))
        #expect(throws: (any Error).self) { try drain(RunMerge([try RunFileReader(path: dir.sub("cut"), bufferSize: 4096)])) }
    }

    @Test(
        "a scratch directory in use is refused to a second fold; once its process is gone (its lock free) it is taken over, and the temporary directory's are swept"
    )
    func abandonedScratch() throws {
        let path = dir.sub("scratch")
        var inUse: ScratchDirectory? = try ScratchDirectory(path: path)
        try Data("run".utf8).write(to: URL(fileURLWithPath: path + "/run-0"))
        #expect(!ScratchDirectory.isAbandoned(path))
        #expect(throws: (any Error).self) { try ScratchDirectory(path: path) }
        // A killed process leaves the directory and its lock file; the kernel frees the lock.
        let left = NSTemporaryDirectory() + ScratchDirectory.prefix + "test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: left, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: left + "/" + ScratchDirectory.lockName, contents: nil)
        #expect(ScratchDirectory.isAbandoned(left))
        #expect(ScratchDirectory.sweepAbandoned() >= 1)
        #expect(!FileManager.default.fileExists(atPath: left))
        // Not a scratch directory (no lock file): never taken, never swept.
        let other = dir.sub("other")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: false)
        #expect(!ScratchDirectory.isAbandoned(other))
        #expect(throws: (any Error).self) { try ScratchDirectory(path: other) }
        inUse?.remove()
        inUse = nil
        #expect(!FileManager.default.fileExists(atPath: path))
        let again = try ScratchDirectory(path: path)
        #expect(FileManager.default.fileExists(atPath: again.file(ScratchDirectory.lockName)))
        again.remove()
    }
}
