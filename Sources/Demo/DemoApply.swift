import Apply
import Foundation
import GRDB
import Ledger
import Logging
import Migration
import Projections

/// The rehearsal's closing act: team B sets each migrated user's new `sub` on their account in
/// the app's own database, a SQLite file made from team A's users, in which one user who signed
/// in during the window already got a second account (the sign-in race).
struct DemoApply {
    let directory: String
    let recipientDir: String
    let logger: Logger

    /// Writes `app.sqlite` (an `accounts` table: `id`, `provider`, `apple_sub` holding team A's
    /// `sub`) from the user lists, with the duplicate account; plans, commits, and says both.
    func run(userLists: [String], _ say: (String) -> Void) async throws {
        let app = directory + "/app.sqlite"
        let projection = UserProjection()
        let ledger = try Ledger.open(at: recipientDir, folders: [projection])
        defer { ledger.close() }
        // The user migrated by signing in with the smallest account_id: the same one in every
        // rehearsal of the same users, whatever order the sign-ins were recorded in.
        let early = try projection.read(ledger) { snapshot, _ in
            var found: (accountID: String, user: UserState)?
            try snapshot.forEachMigratedUser { user in
                guard user.migratedVia == .signIn, let accountID = user.accountID, found.map({ accountID < $0.accountID }) ?? true else { return }
                found = (accountID, user)
            }
            return found?.user
        }
        var accounts: [(String, String)] = []
        for list in userLists {
            accounts += try CSVTable(path: list).rows.compactMap { row in row["account_id"].flatMap { id in row["sub"].map { (id, $0) } } }
        }
        try await DatabaseQueue(path: app).write { [accounts, early] db in
            try db.execute(sql: "CREATE TABLE accounts (id TEXT PRIMARY KEY, provider TEXT NOT NULL, apple_sub TEXT)")
            for (id, sub) in accounts { try db.execute(sql: "INSERT OR IGNORE INTO accounts VALUES (?, 'apple', ?)", arguments: [id, sub]) }
            if let sub = early?.recipientSub { try db.execute(sql: "INSERT INTO accounts VALUES ('acct-new-1', 'apple', ?)", arguments: [sub]) }
        }
        let mapping = try ApplyMapping(table: "accounts", key: "account_id=id", set: "recipient_sub=apple_sub", condition: "provider = 'apple'")
        let options = "--to app.sqlite --table accounts --key account_id=id --set recipient_sub=apple_sub --where \"provider = 'apple'\""
        let reader = try SQLiteAccounts(path: app, mapping: mapping, writable: false)
        let planRun = ApplyRun(ledger: ledger, projection: projection, table: reader, options: ApplyRun.Options(), logger: logger)
        let plan = try await planRun.plan()
        let planned = try projection.read(ledger) { snapshot, _ in try ApplyListing(plan: plan, snapshot: snapshot) }
        say("\n$ handover apply \(options)")
        say("  (team B, the app's own accounts: app.sqlite has a second account for a user who signed in early)")
        say(indented(ApplySummary.plan(plan, planned, table: reader, undo: nil)))
        let writer = try SQLiteAccounts(path: app, mapping: mapping, writable: true)
        let result = try await ApplyRun(ledger: ledger, projection: projection, table: writer, options: ApplyRun.Options(), logger: logger).commit()
        let listing = try projection.read(ledger) { snapshot, _ in try ApplyListing(notApplied: result.notApplied, snapshot: snapshot) }
        say("\n$ handover apply \(options) --commit")
        say("  (exit \(result.exitStatus.rawValue): the collision is left for a person to merge)")
        say(indented(ApplySummary.commit(result, listing, table: writer, undo: nil)))
    }

    private func indented(_ text: String) -> String {
        text.split(separator: "\n").map { TerminalText.wrap("  " + $0, continuation: "      ") }.joined(separator: "\n")
    }
}
