import AppleSimulator
import Apply
import Basics
import Foundation
import GRDB
import Ledger
import TestSupport
import Testing

/// The app's accounts table `apply` is run against, in a SQLite file or a PostgreSQL database of
/// the tests' cluster: made from the demo's users, read back whole.
protocol AppTable {
    /// What `--to` names.
    var to: String { get }
    /// The environment `handover apply` runs with (PostgreSQL's password).
    var environment: [String: String] { get }
    func execute(_ sql: String) throws
    /// Every account: id → [provider, apple_sub, email] (nil for NULL).
    func dump() throws -> [String: [String?]]
    /// Every byte of the database that a plan must leave alone.
    func fingerprint() throws -> String
}

struct SQLiteAppTable: AppTable {
    let path: String
    var to: String { path }
    var environment: [String: String] { [:] }

    func execute(_ sql: String) throws { try DatabaseQueue(path: path).write { try $0.execute(sql: sql) } }

    func dump() throws -> [String: [String?]] {
        try DatabaseQueue(path: path).read { db in
            Dictionary(
                uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, provider, apple_sub, email FROM accounts").map {
                    ($0["id"] as String, [$0["provider"], $0["apple_sub"], $0["email"]] as [String?])
                })
        }
    }

    func fingerprint() throws -> String { Hex.encode(Array(try Data(contentsOf: URL(fileURLWithPath: path)))) }
}

struct PostgresAppTable: AppTable {
    let database: PostgresTestDatabase
    var to: String { database.url }
    var environment: [String: String] { database.environment }

    func execute(_ sql: String) throws { _ = try database.scalar(sql) }

    func dump() throws -> [String: [String?]] {
        Dictionary(
            uniqueKeysWithValues: try database.rows("SELECT id, provider, apple_sub, email FROM accounts").map {
                ($0["id"]?.stringValue ?? "", [$0["provider"]?.stringValue, $0["apple_sub"]?.stringValue, $0["email"]?.stringValue])
            })
    }

    /// The accounts and Handover's marker table, whole: a plan's session is read-only.
    func fingerprint() throws -> String {
        try database.scalar(
            "SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM accounts AS t")
            + (try database.scalar("SELECT to_regclass('handover_apply') IS NOT NULL"))
    }
}

/// The demo's team B ledger, and an accounts table made from team A's users: each account's
/// `apple_sub` is team A's `sub`, its `email` the address team A's app was given (the stand-in's
/// answer: a relay address of team A's, or the user's own), and around them what an operator
/// finds in a real table: two accounts whose users gave the app an address of their own, two
/// without one (NULL), a second account `dup-1` of the user who signed in early (holding their
/// new `sub`), an account `dup-2` holding another user's new relay address already (the email
/// column is unique), and an account of another provider.
struct EmailSetup {
    let dir = TemporaryDirectory()
    let ledger: String
    /// Each user of the ledger, by account_id: `query state`'s row.
    let state: [String: JSONValue]
    /// Migrated users Apple gave a relay address of team B's, sorted: account → that address.
    let relay: [(account: String, address: String)]
    /// The accounts holding an address of the user's own, NULL, and the one whose new address
    /// dup-2 holds.
    let own: [String]
    let nulls: [String]
    let victim: String
    /// The user who signed in early, whose new sub dup-1 holds.
    let signedIn: (accountID: String, recipientSub: String)

    init() throws {
        ledger = try DemoLedger.copy(.recipient, into: dir)
        let apple = try SimulatedApple(directory: try SimulatorDirectory(path: try DemoLedger.copy(file: "apple", into: dir)), rules: .init())
        let rows = try Self.state(ledger)
        state = Dictionary(rows.compactMap { row in row["account_id"]?.stringValue.map { ($0, row) } }, uniquingKeysWith: { a, _ in a })
        relay = state.compactMap { account, row in
            guard row["status"]?.stringValue == "migrated", row["is_private_email"]?.boolValue == true, row["erased_at"] == .null,
                let address = row["email"]?.stringValue
            else { return nil }
            return (account, address)
        }.sorted { $0.account < $1.account }
        let early = try #require(
            state.values.filter { $0["migrated_via"]?.stringValue == "sign-in" }.compactMap { row in
                row["account_id"]?.stringValue.flatMap { id in row["recipient_sub"]?.stringValue.map { (id, $0) } }
            }.min { $0.0 < $1.0 })
        signedIn = early
        var accounts: [(id: String, sub: String, email: String?)] = []
        for file in ["users.csv", "users-late.csv"] {
            let text = try String(contentsOfFile: try DemoLedger.copy(file: file, into: dir), encoding: .utf8)
            for line in text.split(whereSeparator: \.isNewline).dropFirst() {
                let fields = line.split(separator: ",").map(String.init)
                guard !accounts.contains(where: { $0.id == fields[1] }) else { continue }
                let email: String = try #require(apple.senderEmail(teamID: "AAAA111111", sub: fields[0]))
                accounts.append((fields[1], fields[0], email))
            }
        }
        // Of the users whose relay address team A's app holds: two gave the app their own since,
        // two have none, and one's new address is held by dup-2.
        let teamA = Dictionary(uniqueKeysWithValues: accounts.map { ($0.id, $0.email) })
        let replaceable = relay.map(\.account).filter { teamA[$0].flatMap { $0 }.map(ApplyColumn.isRelayAddress) ?? false }
        (own, nulls, victim) = (Array(replaceable[0..<2]), Array(replaceable[2..<4]), replaceable[4])
        for (i, account) in accounts.enumerated() {
            if own.contains(account.id) { accounts[i].email = "own.\(account.id)@example.org" }
            if nulls.contains(account.id) { accounts[i].email = nil }
        }
        self.accounts = accounts
    }

    private let accounts: [(id: String, sub: String, email: String?)]

    /// The accounts table in `table`.
    func fill(_ table: AppTable) throws {
        func literal(_ value: String?) -> String { value.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" } ?? "NULL" }
        let values =
            accounts.map { "(\(literal($0.id)), 'apple', \(literal($0.sub)), \(literal($0.email)))" } + [
                "('dup-1', 'apple', \(literal(signedIn.recipientSub)), NULL)",
                "('dup-2', 'apple', 'made.by.hand', \(literal(address(of: victim))))", "('g-1', 'google', 'google.1', NULL)",
            ]
        try table.execute("CREATE TABLE accounts (id TEXT PRIMARY KEY, provider TEXT NOT NULL, apple_sub TEXT, email TEXT UNIQUE)")
        try table.execute("INSERT INTO accounts VALUES " + values.joined(separator: ", "))
    }

    /// A SQLite accounts table of this setup, filled, kept as it was made (`pristine.sqlite`):
    /// what ``copy(of:as:)`` copies for each run.
    func pristine() throws -> SQLiteAppTable {
        let table = SQLiteAppTable(path: dir.sub("pristine.sqlite"))
        try fill(table)
        return table
    }

    /// A fresh copy of `pristine` named `name` in this setup's directory.
    func copy(of pristine: SQLiteAppTable, as name: String) throws -> SQLiteAppTable {
        let table = SQLiteAppTable(path: dir.sub(name))
        try FileManager.default.copyItem(atPath: pristine.path, toPath: table.path)
        return table
    }

    /// A SQLite accounts table of this setup, filled.
    func sqlite() throws -> SQLiteAppTable {
        let table = SQLiteAppTable(path: dir.sub("app.sqlite"))
        try fill(table)
        return table
    }

    /// A user whose email `apply` sets over a relay address of team A's (`before`, the table's
    /// dump before the run), other than the one whose new address dup-2 holds.
    func person(before: [String: [String?]]) throws -> (account: String, address: String) {
        try #require(relay.first { $0.account != victim && (before[$0.account]?[2] ?? nil).map(ApplyColumn.isRelayAddress) ?? false })
    }

    /// The run ID an apply commit's output names.
    static func runID(of output: String) throws -> String {
        try #require(output.split(separator: "\n").first { $0.hasPrefix("Apply run ") }?.split(separator: " ")[2]).description
    }

    /// The relay address of team B's Apple gave the user of `account`.
    func address(of account: String) -> String { relay.first { $0.account == account }!.address }

    /// The options of `handover apply` to `table` setting `set`, from this ledger or `other`.
    func options(_ table: AppTable, set: [String], ledger other: String? = nil) -> [String] {
        ["apply", "--ledger", other ?? ledger, "--to", table.to, "--table", "accounts", "--key", "account_id=id", "--where", "provider = 'apple'"]
            + set.flatMap { ["--set", $0] }
    }

    /// `query state` of `ledger`, one object a user.
    static func state(_ ledger: String) throws -> [JSONValue] {
        let r = try handover("query", "state", "--ledger", ledger, "--format", "json")
        #expect(r.status == 0, "\(r.err)")
        return try JSONValue.parse(Array(r.out.utf8)).arrayValue ?? []
    }
}
