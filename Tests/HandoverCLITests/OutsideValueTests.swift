import Foundation
import FuzzHarnesses
import LMDB
import Ledger
import Testing
import TestSupport

/// Values the other company or an altered copy chooses, each once a trap (the process died),
/// refused through the command a user runs, with the file and field named. Each is also a
/// fail case in FuzzTesting/FailCases, replayed through its harness by FuzzReplayTests.
@Suite("values from outside and from storage are refused, never a trap")
struct OutsideValueTests {
    let dir = TemporaryDirectory()

    /// A fail case's bytes.
    private func failCase(_ harness: String, _ name: String) throws -> [UInt8] {
        let path = FuzzFixtures.directory + "/../FailCases/\(harness)/\(name)"
        return Array(try #require(FileManager.default.contents(atPath: path), "\(path) is missing"))
    }

    /// A copy of a fixture ledger of FuzzTesting/Fixtures, as a team's own.
    private func fixture(_ side: String) throws -> String {
        let copy = dir.sub(side)
        try FileManager.default.copyItem(atPath: FuzzFixtures.path(side), toPath: copy)
        return copy
    }

    /// Team B's receipt made from a fail case, written out with the pinned key beside it.
    private func receipt(_ name: String) throws -> (directory: String, key: String) {
        let (files, key) = FuzzFiles.receipt(try failCase("handoff-receipt", name))
        let receipt = dir.sub("receipt-" + name)
        try FuzzFiles.write(files, into: receipt)
        let keyFile = dir.sub("recipient.pub")
        try Data((key.line + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        return (receipt, keyFile)
    }

    @Test("handoff confirm: a receipt whose event is a transfer accepted with a window of 200,000,000 days is refused by its type, exit 2, nothing recorded")
    func receiptWithAnotherEvent() throws {
        let ledger = try fixture("sender")
        let (receipt, key) = try self.receipt("transfer-accepted-window-days")
        let before = try head(ledger)
        let r = try handover("handoff", "confirm", receipt, "--recipient-key", key, "--ledger", ledger)
        #expect(r.status == 2, "\(r.err)")
        #expect(r.err.contains("handoff-received.json is event 4, a transfer-accepted event, not the recipient's \"handoff received\""), "\(r.err)")
        // A refused receipt is not acknowledged: the log is as it was.
        #expect(try head(ledger) == before)
    }

    private func head(_ ledger: String) throws -> UInt64 {
        let opened = try Ledger.open(at: ledger, options: Ledger.Options(access: .readOnly))
        defer { opened.close() }
        return try opened.read { try $0.head().sequence }
    }

    @Test("handoff confirm: a cosignature dated 10^12 seconds after 1970 (year 33658) is refused, exit 2, not recorded with a date RFC 3339 cannot write")
    func cosignatureBeyondTime() throws {
        let ledger = try fixture("sender")
        let (receipt, key) = try self.receipt("cosignature-time-beyond-9999")
        let r = try handover("handoff", "confirm", receipt, "--recipient-key", key, "--ledger", ledger)
        #expect(r.status == 2, "\(r.err)")
        #expect(r.err.contains("the cosignature's timestamp 1000000000000 is not a time of years 0000 to 9999"), "\(r.err)")
    }

    @Test("evidence verify: a two-sided bundle holding that event (proved, signed by the bundle's own key) fails naming the file and field, exit 4")
    func bundleWithHugeWindow() throws {
        let bundle = dir.sub("bundle")
        try FuzzFiles.write(FuzzFiles.twoSidedBundle(try failCase("two-sided-bundle", "transfer-accepted-window-days")), into: bundle)
        let r = try handover("evidence", "verify", bundle)
        #expect(r.status == 4, "\(r.err)")
        #expect(r.err.contains("recipient/events/2.json") && r.err.contains("window_days: expected an integer from 1 to 3650"), "\(r.err)")
    }

    /// Replaces the entry `key` of `database` in the copy `ledger` with `value`.
    private func alter(_ ledger: String, _ database: String, key: [UInt8], value: [UInt8]) throws {
        let environment = try Environment(path: ledger)
        _ = try environment.write { txn in try txn.put(txn.openDatabase(database, create: false), key: key, value: value) }
    }

    @Test("an auditor's copy whose transfer window holds 4,294,967,295 days: window, query and report exit 4 naming the record")
    func windowBeyondTime() throws {
        let ledger = try fixture("recipient")
        let acceptedAt = Array(Timestamp(rfc3339: "2026-11-06")!.microseconds.bigEndianBytes)
        try alter(ledger, "windows", key: BigEndian.bytes(2), value: acceptedAt + [0xFF, 0xFF, 0xFF, 0xFF] + BigEndian.bytes(2))
        for command in [["window"], ["query", "pending"], ["report"]] {
            let r = try handover(command + ["--ledger", ledger])
            #expect(r.status == 4, "\(command): \(r.err)")
            #expect(r.err.contains("transfer window: 4294967295 days, not 1 to 3650"), "\(command): \(r.err)")
        }
    }

    @Test("an auditor's copy whose user record holds a time at Int64.min: query and report exit 4 naming the record")
    func userTimeBeyondTime() throws {
        let ledger = try fixture("recipient")
        // The newest record of user 1 (acct-00001), version 2: migrated, its nine texts absent, one time whose zigzag varint is Int64.min.
        let record: [UInt8] = [2, 0, 0, 4, 2, 0, 0, 0] + [UInt8](repeating: 0, count: 9) + [1] + [UInt8](repeating: 0xFF, count: 9) + [1]
        try alter(ledger, "user_versions", key: BigEndian.bytes(1) + BigEndian.bytes(39), value: record)
        for command in [["query", "state"], ["query", "user", "acct-00001"], ["report"]] {
            let r = try handover(command + ["--ledger", ledger])
            #expect(r.status == 4, "\(command): \(r.err)")
            #expect(r.err.contains("users: a time of -9223372036854775808 µs from 1970, outside years 0000 to 9999"), "\(command): \(r.err)")
        }
    }
}

private extension Int64 {
    var bigEndianBytes: [UInt8] { BigEndian.bytes(UInt64(bitPattern: self)) }
}
