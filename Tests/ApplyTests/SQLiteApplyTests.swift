import Apply
import Foundation
import GRDB
import Ledger
import Projections
import TestSupport
import Testing

/// `apply`'s reading and writing of an app's accounts table in SQLite: a plan changes nothing,
/// a commit changes exactly the planned cells under compare-and-set, column by column,
/// collisions and changes made meanwhile are never written, an address of the user's own is
/// kept, and hostile values reach the database only as bound values.
@Suite("apply to a SQLite accounts table")
struct SQLiteApplyTests {
    /// An app database: accounts 1…5 from team A (provider 'apple', the sender's sub, a relay
    /// address of team A's; account 2 the user's own address, account 4 none), account 6 a user
    /// who signed in early with their new sub and got a second account (holding account 1's new
    /// address too), and account 7 of another provider.
    static func appDatabase(in dir: TemporaryDirectory) throws -> String {
        let path = dir.sub("app.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE accounts (id INTEGER PRIMARY KEY, provider TEXT NOT NULL, apple_sub TEXT, email TEXT UNIQUE, mail_ok BOOLEAN)")
            for i in 1...5 {
                let email = i == 2 ? "own.2@example.org" : i == 4 ? nil : "a\(i)@privaterelay.appleid.com"
                try db.execute(sql: "INSERT INTO accounts VALUES (?, 'apple', ?, ?, NULL)", arguments: [i, "old.\(i)", email])
            }
            try db.execute(sql: "INSERT INTO accounts VALUES (6, 'apple', 'new.3', 'b5@privaterelay.appleid.com', NULL)")
            try db.execute(sql: "INSERT INTO accounts VALUES (7, 'google', 'old.7', NULL, NULL)")
        }
        return path
    }

    /// Migrated users of accounts 1…5, 7 and 9 (no account), each with a relay address of team
    /// B's (user 5's is the one account 6 holds) and forwarding on (user 3's off), the flag as
    /// the database shows it (`on`, `off`).
    static func items(flags: (on: String, off: String) = ("1", "0")) -> [ApplyPlan.Item] {
        ["1", "2", "3", "4", "5", "7", "9"].map { id in
            ApplyPlan.Item(
                accountID: id, transferSub: "t.\(id)",
                cells: [
                    .init(column: .recipientSub, new: "new.\(id)"), .init(column: .email, new: "b\(id)@privaterelay.appleid.com"),
                    .init(column: .emailForwarding, new: id == "3" ? flags.off : flags.on),
                ])
        }
    }

    static var items: [ApplyPlan.Item] { items() }

    /// The items with the `sub` alone.
    static var subItems: [ApplyPlan.Item] {
        items.map { item in
            var item = item
            item.cells = [item.cells[0]]
            return item
        }
    }

    /// Each account's columns: id → [apple_sub, email, mail_ok] as text.
    static func rows(_ path: String) throws -> [String: [String?]] {
        try DatabaseQueue(path: path).read { db in
            Dictionary(
                uniqueKeysWithValues: try Row.fetchAll(
                    db, sql: "SELECT CAST(id AS TEXT) AS id, apple_sub, email, CAST(mail_ok AS TEXT) AS mail_ok FROM accounts"
                ).map { ($0["id"] as String, [$0["apple_sub"], $0["email"], $0["mail_ok"]] as [String?]) })
        }
    }

    static func mapping(_ set: [String] = ["recipient_sub=apple_sub", "email=email", "email_forwarding=mail_ok"]) throws -> ApplyMapping {
        try ApplyMapping(table: "accounts", key: "account_id=id", set: set, condition: "provider = 'apple'")
    }

    /// The plan's outcomes: account → its cells' planned outcomes in column order.
    static func outcomes(_ plan: ApplyPlan) -> [String: [ApplyPlanned]] {
        Dictionary(uniqueKeysWithValues: plan.entries.map { ($0.accountID, $0.cells.map(\.planned)) })
    }

    /// What the plan of ``items`` finds in ``appDatabase(in:)`` with account 4's sub set already.
    static let planned: [String: [ApplyPlanned]] = [
        "1": [.change, .change, .change], "2": [.change, .kept, .change], "3": [.collision, .change, .change],
        "4": [.already, .change, .change], "5": [.change, .collision, .change], "7": [.noAccount, .noAccount, .noAccount],
        "9": [.noAccount, .noAccount, .noAccount],
    ]

    @Test(
        "a plan reads the table read-only and changes no byte; per column it finds the changes, the account already done, the account missing or outside the condition, the collision with the account that signed in early, and the address of the user's own kept"
    )
    func plan() async throws {
        let dir = TemporaryDirectory()
        let path = try Self.appDatabase(in: dir)
        // Account 4 already took its new sub.
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE accounts SET apple_sub = 'new.4' WHERE id = 4") }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let table = try SQLiteAccounts(path: path, mapping: try Self.mapping(), writable: false)
        let plan = try await ApplyPlan(items: Self.items, table: table)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the plan wrote nothing")
        #expect(Self.outcomes(plan) == Self.planned, "\(Self.outcomes(plan))")
        let entry = { (id: String) in plan.entries.first { $0.accountID == id }! }
        #expect(entry("3").cell(.recipientSub)?.holders == ["6"], "the collision names the account holding the new sub")
        #expect(entry("5").cell(.email)?.holders == ["6"], "and the one holding the new address")
        #expect(entry("1").cell(.email)?.old == "a1@privaterelay.appleid.com" && entry("4").cell(.email)?.old == nil)
        #expect(entry("2").cell(.email)?.old == nil, "an address of the user's own is not carried, let alone recorded")
        #expect(entry("1").cell(.emailForwarding)?.new == "1" && table.flagText(false) == "0")
        await #expect(throws: ApplyError.self) {
            _ = try await table.write(plan.changes, marker: ApplyMarker(run: "r", batch: 0, intentSHA256: "00"))
        }
    }

    @Test(
        "a commit writes exactly the planned cells under compare-and-set, column by column, with its marker in the same transaction: a sub the app changed meanwhile is kept and the same account's address still taken; a new collision is not written"
    )
    func commit() async throws {
        let dir = TemporaryDirectory()
        let path = try Self.appDatabase(in: dir)
        let table = try SQLiteAccounts(path: path, mapping: try Self.mapping(), writable: true)
        let plan = try await ApplyPlan(items: Self.items, table: table)
        #expect(plan.changes.map { "\($0.key) \($0.column.rawValue)" }.count == 12)
        // Meanwhile the app changes account 1's sub, and account 4 gets an address of the user's own.
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE accounts SET apple_sub = 'changed.1' WHERE id = 1")
            try db.execute(sql: "UPDATE accounts SET email = 'own.4@example.org' WHERE id = 4")
        }
        let outcomes = try await table.write(plan.changes, marker: ApplyMarker(run: "run-1", batch: 0, intentSHA256: "aa"))
        let byCell = Dictionary(uniqueKeysWithValues: zip(plan.changes.map { "\($0.key) \($0.column.rawValue)" }, outcomes))
        #expect(byCell["1 recipient_sub"] == .changedMeanwhile && byCell["1 email"] == .applied && byCell["1 email_forwarding"] == .applied)
        #expect(byCell["4 email"] == .changedMeanwhile, "an address the user gave the app during the run is never overwritten")
        let rows = try Self.rows(path)
        #expect(rows["1"] == ["changed.1", "b1@privaterelay.appleid.com", "1"], "\(rows)")
        #expect(rows["2"] == ["new.2", "own.2@example.org", "1"], "the user's own address kept")
        #expect(rows["3"] == ["old.3", "b3@privaterelay.appleid.com", "0"], "the colliding sub not written, the rest of the account is")
        #expect(rows["4"] == ["new.4", "own.4@example.org", "1"])
        #expect(rows["5"] == ["new.5", "a5@privaterelay.appleid.com", "1"], "the colliding address not written")
        #expect(rows["6"] == ["new.3", "b5@privaterelay.appleid.com", nil] && rows["7"] == ["old.7", nil, nil])
        #expect(
            try await table.committedBatches(of: "run-1") == [ApplyMarker(run: "run-1", batch: 0, intentSHA256: "aa", outcomes: outcomes)])
        #expect(try await table.committedBatches(of: "run-2").isEmpty)

        // A second plan after the commit: account 1's address is done, its sub the app's now.
        let again = try await ApplyPlan(items: Self.items, table: table)
        #expect(again.entries.first { $0.accountID == "1" }?.cells.map(\.planned) == [.change, .already, .already])
        // Another account comes to hold account 3's sub: a collision found at the write.
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE accounts SET apple_sub = 'new.9' WHERE id = 7") }
        #expect(
            try await table.write(
                [AccountChange(key: "3", column: .recipientSub, old: "old.3", new: "new.9")],
                marker: ApplyMarker(run: "run-1", batch: 1, intentSHA256: "bb")) == [.collision])
        #expect(try Self.rows(path)["3"]?[0] == "old.3", "a collision is never written")
    }

    @Test(
        "a relay address is known whatever the case of its domain; a mapping of the sub alone reads and writes no other column, and asks for no other column to exist"
    )
    func relayAddressesAndMappings() async throws {
        #expect(ApplyColumn.isRelayAddress("ab12@PrivateRelay.AppleID.com") && !ApplyColumn.isRelayAddress("@privaterelay.appleid.com"))
        #expect(!ApplyColumn.isRelayAddress("user@example.com") && !ApplyColumn.isRelayAddress("privaterelay.appleid.com"))
        let dir = TemporaryDirectory()
        let path = dir.sub("sub-only.sqlite")
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "CREATE TABLE accounts (id TEXT PRIMARY KEY, provider TEXT, apple_sub TEXT)")
            try db.execute(sql: "INSERT INTO accounts VALUES ('1', 'apple', 'old.1')")
        }
        let table = try SQLiteAccounts(path: path, mapping: try Self.mapping(["recipient_sub=apple_sub"]), writable: true)
        let plan = try await ApplyPlan(items: Self.subItems, table: table)
        #expect(Self.outcomes(plan)["1"] == [.change])
        #expect(try await table.write(plan.changes, marker: ApplyMarker(run: "r", batch: 0, intentSHA256: "aa")) == [.applied])
    }

    @Test(
        "hostile names are quoted and hostile values bound: a sub or an address with quotes and SQL is stored as given, and a table name that is SQL names no table"
    )
    func hostile() async throws {
        let dir = TemporaryDirectory()
        let path = try Self.appDatabase(in: dir)
        let table = try SQLiteAccounts(path: path, mapping: try Self.mapping(), writable: true)
        let values = HostileStrings.withoutNUL.filter { !$0.isEmpty }
        let changes = values.enumerated().prefix(4).flatMap { value in
            [
                AccountChange(
                    key: String(value.offset + 1), column: .recipientSub, old: "old.\(value.offset + 1)",
                    new: value.element + "'); DROP TABLE accounts; --"),
                AccountChange(key: String(value.offset + 1), column: .emailForwarding, old: nil, new: value.element),
            ]
        }
        #expect(
            try await table.write(changes, marker: ApplyMarker(run: "hostile", batch: 0, intentSHA256: "cc"))
                == Array(repeating: .applied, count: changes.count))
        var stored = try Self.rows(path)
        for change in changes { #expect(stored[change.key]?[change.column == .recipientSub ? 0 : 2] == change.new) }
        // An account whose column is NULL takes the new value; compare-and-set holds NULL as the old value.
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE accounts SET apple_sub = NULL WHERE id = 5") }
        #expect(
            try await table.write(
                [AccountChange(key: "5", old: "old.5", new: "new.5"), AccountChange(key: "5", old: nil, new: "new.5")],
                marker: ApplyMarker(run: "hostile", batch: 1, intentSHA256: "dd")) == [.changedMeanwhile, .applied])
        stored = try Self.rows(path)
        #expect(stored["5"]?[0] == "new.5")
        let sneaky = try SQLiteAccounts(
            path: path, mapping: try ApplyMapping(table: "accounts\" WHERE 1=1; --", key: "account_id=id", set: ["recipient_sub=apple_sub"]),
            writable: false)
        await #expect(throws: ApplyError.self) { _ = try await sneaky.currentValues(forKeys: ["1"]) }
        #expect(throws: ApplyError.self) { _ = try ApplyMapping(table: "accounts", key: "sub=id", set: ["recipient_sub=apple_sub"]) }
        #expect(throws: ApplyError.self) { _ = try ApplyMapping(table: "accounts", key: "account_id=apple_sub", set: ["recipient_sub=apple_sub"]) }
        #expect(throws: ApplyError.self) { _ = try ApplyMapping(table: "accounts", key: "account_id=id", set: ["recipient_sub=x", "email=x"]) }
        #expect(throws: ApplyError.self) { _ = try ApplyMapping(table: "accounts", key: "account_id=id", set: ["email=a", "email=b"]) }
        #expect(throws: ApplyError.self) { _ = try ApplyMapping(table: "accounts", key: "account_id=id", set: ["phone=a"]) }
        #expect(throws: ApplyError.self) { _ = try ApplyMapping(table: "accounts", key: "account_id=id", set: []) }
    }
}
