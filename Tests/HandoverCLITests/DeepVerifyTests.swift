import Foundation
import LMDB
import LogEngine
import TestSupport
import Testing

@testable import Ledger

/// `verify` checks the type index entry by entry, and `verify --deep` every projection an
/// answer comes from, against what the log implies.
@Suite("verify --deep: derived data against the log")
struct DeepVerifyTests {
    let dir = TemporaryDirectory()

    /// A fresh copy of the demo's recipient ledger, this test's own.
    private func demoLedger() throws -> String {
        try DemoLedger.copy(.recipient, into: dir)
    }

    /// A fresh copy of `ledger`, changed by `change` in one write transaction on its environment.
    private func tampered(_ ledger: String, _ name: String, _ change: (WriteTransaction) throws -> Void) throws -> String {
        let copy = dir.sub(name)
        let copied = try runCommand("/bin/cp", ["-a", ledger, copy])
        #expect(copied.status == 0, "\(copied.err)")
        let environment = try Environment(path: copy)
        try environment.write { txn in try change(txn) }
        return copy
    }

    /// The first entry of `database` (a copy of its bytes).
    private func firstEntry(_ txn: ReadTransaction, _ database: Database) throws -> (key: [UInt8], value: [UInt8]) {
        try txn.withCursor(database) { cursor in
            let entry = try #require(try cursor.first())
            return (Array(entry.key), Array(entry.value))
        }
    }

    @Test(
        "one byte of a user record, a deleted identifier link, a migrated_order entry naming another user, a changed window: verify --deep exits 4 naming the database and entry, and after projections rebuild exits 0"
    )
    func projectionsTampered() throws {
        let ledger = try demoLedger()
        var r = try handover(["verify", "--deep", "--ledger", ledger])
        #expect(
            r.status == 0 && r.out.contains("the projections (user records, identifier links, migrated_order, windows) equal the log"),
            "\(r.out)\(r.err)")

        let cases: [(name: String, database: String, change: (WriteTransaction) throws -> Void)] = [
            (
                "record", "user_versions",
                { txn in
                    let db = try txn.openDatabase("user_versions", create: false)
                    var (key, value) = try firstEntry(txn, db)
                    value[value.count / 2] ^= 0x01
                    try txn.put(db, key: key, value: value)
                }
            ),
            (
                "link", "user_links",
                { txn in
                    let db = try txn.openDatabase("user_links", create: false)
                    let (key, _) = try firstEntry(txn, db)
                    _ = try txn.delete(db, key: key)
                }
            ),
            (
                "order", "migrated_order",
                { txn in
                    let db = try txn.openDatabase("migrated_order", create: false)
                    var (key, value) = try firstEntry(txn, db)
                    _ = try txn.delete(db, key: key)
                    key[15] ^= 0x01  // the user key's last byte: another user
                    try txn.put(db, key: key, value: value)
                }
            ),
            (
                "window", "windows",
                { txn in
                    let db = try txn.openDatabase("windows", create: false)
                    var (key, value) = try firstEntry(txn, db)
                    value[value.count - 1] ^= 0x01
                    try txn.put(db, key: key, value: value)
                }
            ),
        ]
        for (name, database, change) in cases {
            let copy = try tampered(ledger, name, change)
            r = try handover(["verify", "--ledger", copy])
            #expect(r.status == 0, "\(name): the log itself is intact: \(r.err)")
            r = try handover(["verify", "--deep", "--ledger", copy])
            #expect(
                r.status == 4 && r.err.contains("derived data differs from what the log implies: \(database),")
                    && r.err.contains("projections rebuild"),
                "\(name): \(r.out)\(r.err)")
            let scratch = dir.sub("rebuild-scratch-" + name)
            let rebuilt = try handover(["projections", "rebuild", "--ledger", copy, "--scratch", scratch])
            #expect(rebuilt.status == 0, "\(rebuilt.err)")
            #expect(!FileManager.default.fileExists(atPath: scratch), "the rebuild's scratch fold is removed after")
            r = try handover(["verify", "--deep", "--ledger", copy])
            #expect(r.status == 0, "\(name) after the rebuild: \(r.out)\(r.err)")
        }
        let refused = try handover(["projections", "rebuild", "--ledger", ledger, "--scratch", dir.path])
        #expect(refused.status == 2 && refused.err.contains("exists; give a new directory"), "\(refused.err)")
    }

    @Test("an event filed under another type, the counts unchanged: verify exits 4 naming the event and its type")
    func typeIndexMisfiled() throws {
        let ledger = try demoLedger()
        var moved: UInt64 = 0
        let copy = try tampered(ledger, "type") { txn in
            let db = try txn.openDatabase("type_index", flags: [.duplicateSort, .duplicateFixed], create: false)
            let sequence = try txn.withCursor(db) { cursor in
                Array(try #require(try cursor.seek(key: Array("transfer-id-exchanged".utf8), valueAtLeast: BigEndian.bytes(0))).value)
            }
            moved = try BigEndian.uint64(sequence)
            _ = try txn.delete(db, key: Array("transfer-id-exchanged".utf8), value: sequence)
            try txn.put(db, key: Array("notification-received".utf8), value: sequence)
        }
        let r = try handover(["verify", "--ledger", copy])
        #expect(r.status == 4 && r.err.contains("type_index does not file event \(moved) under its type transfer-id-exchanged"), "\(r.out)\(r.err)")
    }

    @Test("a malformed user record or event record exits 4, with the reason, from every command that reads it")
    func malformedRecordsExitFour() throws {
        let ledger = try demoLedger()
        let signed = try handover(["checkpoint", "--ledger", ledger])  // for the evidence bundle
        #expect(signed.status == 0, "\(signed.err)")
        let identifier = try #require(
            try handover(["query", "migrated", "--format", "csv", "--ledger", ledger]).out
                .split(separator: "\r\n").dropFirst().first?.split(separator: ",").first.map(String.init))
        // Every user record with a version byte no Handover wrote.
        let users = try tampered(ledger, "users") { txn in
            let db = try txn.openDatabase("user_versions", create: false)
            var entries: [(key: [UInt8], value: [UInt8])] = []
            try txn.withCursor(db) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    entries.append((Array(current.key), Array(current.value)))
                    entry = try cursor.next()
                }
            }
            for (key, var value) in entries {
                value[0] = 0x7F
                try txn.put(db, key: key, value: value)
            }
        }
        let readers: [[String]] = [
            ["query", "state"], ["query", "migrated"], ["query", "pending"], ["query", "failures"], ["query", "unmatched"],
            ["query", "user", identifier], ["report"], ["export", "--format", "csv", "--out", dir.sub("users.csv")],
            ["export", "--format", "jsonl", "--out", dir.sub("users.jsonl")], ["export", "--format", "sqlite", "--out", dir.sub("users.sqlite")],
            ["evidence", identifier, "--out", dir.sub("users-evidence")],
        ]
        for command in readers {
            let r = try handover(command + ["--ledger", users])
            #expect(
                r.status == 4 && r.err.hasPrefix("error: ") && r.err.contains("unknown record version"),
                "\(command.joined(separator: " ")): exit \(r.status)\n\(r.err)")
        }
        // One event's JSON no longer an object: the readers that decode it (not verify, which
        // finds the chain broken first) exit 4 naming the event.
        let events = try tampered(ledger, "events") { txn in
            let db = try txn.openDatabase("log", create: false)
            var (key, value) = try firstEntry(txn, db)
            value[32] = UInt8(ascii: "[")
            try txn.put(db, key: key, value: value)
        }
        for command in [
            ["query", "events"], ["export", "--format", "jsonl", "--out", dir.sub("events.jsonl")],
            ["export", "--format", "csv", "--out", dir.sub("events.csv")],
        ] {
            let r = try handover(command + ["--ledger", events])
            #expect(r.status == 4 && r.err.contains("event 1:"), "\(command.joined(separator: " ")): exit \(r.status)\n\(r.err)")
        }
    }
}
