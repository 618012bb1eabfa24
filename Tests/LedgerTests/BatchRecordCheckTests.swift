import Dispatch
import LogEngine
import Testing

@testable import Ledger

/// The chain checks both of verify's threads share: whoever checks which run, the first broken
/// record in order is the one found.
@Suite struct BatchRecordCheckTests {
    /// `count` stored records (chain hash ‖ JSON) chained from `before`, with the JSON of those
    /// at `broken` altered after their hash was taken.
    private func records(_ count: Int, after before: SHA256Hash, broken: Set<Int>) -> [[UInt8]] {
        var previous = before
        return (0..<count).map { i in
            var json = Array("{\"recorded_at\":\"2026-11-24T10:00:00.000000Z\",\"seq\":\(i + 1),\"type\":\"run-started\"}".utf8)
            let hash = previous.withUnsafeBytes { p in json.withUnsafeBytes { SHA256Hash(hashing: p, $0) } }
            previous = hash
            if broken.contains(i) { json[2] ^= 0x01 }
            return hash.bytes + json
        }
    }

    @Test("eight threads claiming one record at a time find the first of several broken records, every time")
    func firstBrokenWhoeverChecks() throws {
        let before = Array(repeating: UInt8(7), count: 32).withUnsafeBytes { SHA256Hash($0)! }
        for broken in [Set<Int>(), [0], [999], [3, 700, 701], [511, 512, 1000], [40, 260]] {
            let stored = records(1000, after: before, broken: broken)
            let pointers = stored.map { bytes in
                let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 8)
                copy.copyBytes(from: bytes)
                return UnsafeRawBufferPointer(copy)
            }
            defer { for pointer in pointers { pointer.deallocate() } }
            for round in 0..<50 {
                let check = BatchRecordCheck(pointers, format: .ledgerEvents, after: before, run: 1)
                // Later helpers start first, so high runs are checked before low ones are claimed.
                DispatchQueue.concurrentPerform(iterations: 8) { _ in check.help() }
                #expect(check.firstBroken == broken.min(), "broken \(broken.sorted()), round \(round)")
                // Each record before it has its envelope read, whichever thread read it.
                #expect((0..<(broken.min() ?? 1000)).allSatisfy { check.envelope($0)?.sequence == UInt64($0 + 1) })
            }
        }
    }
}
