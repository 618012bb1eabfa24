import Apply
import Foundation
import GRDB
import Ledger
import Projections
import TestSupport
import Testing

/// `apply`'s reading and writing of an app's accounts table in SQLite: a plan changes nothing,
/// a commit changes exactly the planned rows under compare-and-set, collisions and changes made
/// meanwhile are never written, and hostile values reach the database only as bound values.
@Suite("apply to a SQLite accounts table")
struct SQLiteApplyTests {
    /// An app database: accounts 1…5 from team A (provider 'apple', the sender's sub), account 6
    /// a user who signed in early with their new sub and got a second account, and account 7 of
    /// another provider.
    static func appDatabase(in dir: TemporaryDirectory) throws -> String {
        let path = dir.sub("app.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE accounts (id INTEGER PRIMARY KEY, provider TEXT NOT NULL, apple_sub TEXT)")
            for i in 1...5 { try db.execute(sql: "INSERT INTO accounts VALUES (?, 'apple', ?)", arguments: [i, "old.\(i)"]) }
            try db.execute(sql: "INSERT INTO accounts VALUES (6, 'apple', 'new.3')")
            try db.execute(sql: "INSERT INTO accounts VALUES (7, 'google', 'old.7')")
        }
        return path
    }

    /// Migrated users of accounts 1…4 and 7, 9 (no account) and one not migrated.
    static var users: [UserState] {
        var users: [UserState] = []
        for (n, id) in ["1", "2", "3", "4", "7", "9", "5"].enumerated() {
            var user = UserState(key: UInt64(n + 1), status: id == "5" ? .received : .migrated, sequence: UInt64(n + 1))
            user.ids = Identifiers(accountID: id, transferSub: "t.\(id)", recipientSub: "new.\(id)")
            users.append(user)
        }
        return users
    }

    static func column(_ path: String) throws -> [String: String?] {
        try DatabaseQueue(path: path).read { db in
            Dictionary(
                uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, apple_sub FROM accounts").map {
                    (String($0["id"] as Int64), $0["apple_sub"] as String?)
                })
        }
    }

    static func mapping() throws -> ApplyMapping {
        try ApplyMapping(table: "accounts", key: "account_id=id", set: "recipient_sub=apple_sub", condition: "provider = 'apple'")
    }

    @Test(
        "a plan reads the table read-only and changes no byte; it finds the changes, the account already done, the account missing or outside the condition, and the collision with the account that signed in early"
    )
    func plan() async throws {
        let dir = TemporaryDirectory()
        let path = try Self.appDatabase(in: dir)
        // Account 4 already took its new sub.
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE accounts SET apple_sub = 'new.4' WHERE id = 4") }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let table = try SQLiteAccounts(path: path, mapping: try Self.mapping(), writable: false)
        let plan = try await ApplyPlan(users: Self.users, table: table)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the plan wrote nothing")
        let outcomes = Dictionary(uniqueKeysWithValues: plan.entries.map { ($0.accountID, $0.outcome) })
        #expect(outcomes == ["1": .change, "2": .change, "3": .collision, "4": .already, "7": .noAccount, "9": .noAccount], "\(outcomes)")
        #expect(plan.entries.first { $0.accountID == "3" }?.holders == ["6"], "the collision names the account holding the new sub")
        #expect(plan.entries.first { $0.accountID == "1" }?.old == "old.1")
        await #expect(throws: ApplyError.self) {
            _ = try await table.write(plan.changes, marker: ApplyMarker(run: "r", batch: 0, intentSHA256: "00"))
        }
    }

    @Test(
        "a commit writes exactly the planned changes under compare-and-set, with its marker in the same transaction; a row changed meanwhile and a new collision are reported and not written"
    )
    func commit() async throws {
        let dir = TemporaryDirectory()
        let path = try Self.appDatabase(in: dir)
        let table = try SQLiteAccounts(path: path, mapping: try Self.mapping(), writable: true)
        let plan = try await ApplyPlan(users: Self.users, table: table)
        #expect(plan.changes.map(\.key) == ["1", "2", "4"])
        // Meanwhile the app changes account 2.
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE accounts SET apple_sub = 'changed.2' WHERE id = 2")
        }
        var outcomes = try await table.write(plan.changes, marker: ApplyMarker(run: "run-1", batch: 0, intentSHA256: "aa"))
        #expect(outcomes == [.applied, .changedMeanwhile, .applied])
        var values = try Self.column(path)
        #expect(
            values == ["1": "new.1", "2": "changed.2", "3": "old.3", "4": "new.4", "5": "old.5", "6": "new.3", "7": "old.7"],
            "exactly the planned rows, the one changed meanwhile kept")
        #expect(
            try await table.committedBatches(of: "run-1") == [
                ApplyMarker(run: "run-1", batch: 0, intentSHA256: "aa", outcomes: [.applied, .changedMeanwhile, .applied])
            ])
        #expect(try await table.committedBatches(of: "run-2").isEmpty)

        try await DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE accounts SET apple_sub = 'new.5' WHERE id = 7") }
        outcomes = try await table.write(
            [AccountChange(key: "5", old: "old.5", new: "new.5")], marker: ApplyMarker(run: "run-1", batch: 1, intentSHA256: "bb"))
        #expect(outcomes == [.collision])
        values = try Self.column(path)
        #expect(values["5"] == "old.5", "a collision is never written")
        // A second plan after the commit: account 1 is done.
        #expect(try await ApplyPlan(users: Self.users, table: table).entries.first { $0.accountID == "1" }?.outcome == .already)
    }

    @Test(
        "hostile names are quoted and hostile values bound: a sub with quotes and SQL is stored as given, and a table name that is SQL names no table"
    )
    func hostile() async throws {
        let dir = TemporaryDirectory()
        let path = try Self.appDatabase(in: dir)
        let table = try SQLiteAccounts(path: path, mapping: try Self.mapping(), writable: true)
        let values = HostileStrings.withoutNUL.filter { !$0.isEmpty }
        let changes = values.enumerated().prefix(4).map {
            AccountChange(key: String($0.offset + 1), old: "old.\($0.offset + 1)", new: $0.element + "'); DROP TABLE accounts; --")
        }
        #expect(
            try await table.write(changes, marker: ApplyMarker(run: "hostile", batch: 0, intentSHA256: "cc"))
                == Array(repeating: .applied, count: changes.count))
        var stored = try Self.column(path)
        for change in changes { #expect(stored[change.key] == change.new) }
        // An account whose column is NULL takes the new value; compare-and-set holds NULL as the old value.
        try await DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE accounts SET apple_sub = NULL WHERE id = 5") }
        #expect(
            try await table.write(
                [AccountChange(key: "5", old: "old.5", new: "new.5"), AccountChange(key: "5", old: nil, new: "new.5")],
                marker: ApplyMarker(run: "hostile", batch: 1, intentSHA256: "dd")) == [.changedMeanwhile, .applied])
        stored = try Self.column(path)
        #expect(stored["5"] == "new.5")
        let sneaky = try SQLiteAccounts(
            path: path, mapping: try ApplyMapping(table: "accounts\" WHERE 1=1; --", key: "account_id=id", set: "recipient_sub=apple_sub"),
            writable: false)
        await #expect(throws: ApplyError.self) { _ = try await sneaky.currentValues(forKeys: ["1"]) }
        #expect(throws: ApplyError.self) { _ = try ApplyMapping(table: "accounts", key: "sub=id", set: "recipient_sub=apple_sub") }
        #expect(throws: ApplyError.self) { _ = try ApplyMapping(table: "accounts", key: "account_id=apple_sub", set: "recipient_sub=apple_sub") }
    }
}
