import Basics
import Foundation
import FuzzHarnesses
import LMDB
import Ledger
import LogEngine
import TestSupport
import Testing

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

    @Test(
        "handoff confirm: a receipt whose event is a transfer accepted with a window of 200,000,000 days is refused by its type, exit 2, nothing recorded"
    )
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

    @Test(
        "handoff confirm: a cosignature dated 10^12 seconds after 1970 (year 33658) is refused, exit 2, not recorded with a date RFC 3339 cannot write"
    )
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

extension OutsideValueTests {
    /// One stored entry an altered copy may hold, and what a command says of it.
    struct Alteration: Sendable, CustomTestStringConvertible {
        let name: String
        let database: String
        let key: [UInt8]
        let value: [UInt8]
        let command: [String]
        let message: String
        var testDescription: String { name }
    }

    static let alterations: [Alteration] = [
        Alteration(
            name: "meta.head names an event the log lacks: a writable open refuses, it does not fold forever",
            database: "meta", key: Array("head".utf8), value: BigEndian.bytes(49) + [UInt8](repeating: 7, count: 32) + BigEndian.bytes(0),
            command: ["upgrade"], message: "the log holds 0 of events 49 to 49"),
        Alteration(
            name: "the projections' checkpoint is after the log's last event",
            database: "projection_state", key: Array("checkpoint".utf8), value: [UInt8](repeating: 0xFF, count: 8),
            command: ["query", "state"], message: "the projections end at event 18446744073709551615, after the log's last, 48"),
        Alteration(
            name: "a log record no longer than its chain hash, proved",
            database: "log", key: BigEndian.bytes(48), value: [UInt8](repeating: 1, count: 10),
            command: ["prove", "48"], message: "event 48: record has 10 bytes"),
        Alteration(
            name: "a user record under a key beyond 2^63",
            database: "user_versions", key: BigEndian.bytes(1 << 63 | 1) + BigEndian.bytes(39),
            value: [2, 0, 0, 4, 2, 0, 0, 0] + [UInt8](repeating: 0, count: 10),
            command: ["query", "state"], message: "users: user 9223372036854775809 has events 39 to 39, numbers no ledger gives"),
        Alteration(
            name: "a user record counting 2^63 attempts",
            database: "user_versions", key: BigEndian.bytes(1) + BigEndian.bytes(39),
            value: [2, 0, 0, 4, 2] + [UInt8](repeating: 0x80, count: 9) + [1, 0, 0] + [UInt8](repeating: 0, count: 10),
            command: ["report"], message: "users: user 1 counts 9223372036854775807 attempts"),
    ]

    @Test("an auditor's copy altered in one entry: the command refuses it naming the entry, exit 4", arguments: alterations)
    func alteredEntry(_ alteration: Alteration) throws {
        let ledger = try fixture("recipient")
        try alter(ledger, alteration.database, key: alteration.key, value: alteration.value)
        let r = try handover(alteration.command + ["--ledger", ledger])
        #expect(r.status == 4, "\(r.err)")
        #expect(r.err.contains(alteration.message), "\(r.err)")
    }

    @Test("verify --checkpoint: a checkpoint of no events, signed by the key given, proves nothing and says so, exit 4")
    func emptyCheckpoint() throws {
        let ledger = try fixture("recipient")
        let keys = dir.sub("stranger")
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        let key = try CheckpointKey.create(in: keys)
        let opened = try Ledger.open(at: ledger, options: Ledger.Options(access: .readOnly))
        let origin = try opened.origin()
        opened.close()
        let checkpoint = try Checkpoint(
            origin: origin, treeSize: 0, rootHash: MerkleHash.emptyTree, time: Timestamp(seconds: 1_790_000_000), key: key)
        let file = dir.sub("empty-checkpoint.txt")
        try Data(checkpoint.text.utf8).write(to: URL(fileURLWithPath: file))
        let r = try handover(
            "verify", "--ledger", ledger, "--checkpoint", file, "--public-key", Checkpoint.verifierKey(name: origin, publicKey: key.publicKey))
        #expect(r.status == 4, "\(r.out)\(r.err)")
        #expect((r.out + r.err).contains("the checkpoint covers no events: it proves nothing about this log"), "\(r.out)\(r.err)")
    }
}

extension Int64 {
    fileprivate var bigEndianBytes: [UInt8] { BigEndian.bytes(UInt64(bitPattern: self)) }
}
