import AppleSimulator
import Apply
import Basics
import Foundation
import GRDB
import Ledger
import Logging
import Migration
import Projections

/// The rehearsal's closing act: team B sets each migrated user's new `sub` and private relay
/// address on their account in the app's own database, a SQLite file made from team A's users
/// (each with the email team A's app was given: a relay address of team A's, or the user's own),
/// in which one user who signed in during the window already got a second account (the sign-in
/// race).
struct DemoApply {
    let directory: String
    let recipientDir: String
    let logger: Logger

    /// The options `handover apply` is run with, as printed.
    static let options =
        "--to app.sqlite --table accounts --key account_id=id --set recipient_sub=apple_sub --set email=email --where \"provider = 'apple'\""

    /// Writes `app.sqlite` (an `accounts` table: `id`, `provider`, `apple_sub` holding team A's
    /// `sub`, `email` as team A's app was given it, unique) from the user lists, with the
    /// duplicate account; plans, commits, and says both.
    func run(userLists: [String], senderTeam: String, _ say: (String) -> Void) async throws {
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
        let apple = try SimulatedApple(directory: try SimulatorDirectory(path: directory + "/apple"), rules: .init())
        var accounts: [(id: String, sub: String, email: String?)] = []
        for list in userLists {
            accounts += try CSVTable(path: list).rows.compactMap { row in
                row["account_id"].flatMap { id in row["sub"].map { (id, $0, apple.senderEmail(teamID: senderTeam, sub: $0)) } }
            }
        }
        try await DatabaseQueue(path: app).write { [accounts, early] db in
            try db.execute(sql: "CREATE TABLE accounts (id TEXT PRIMARY KEY, provider TEXT NOT NULL, apple_sub TEXT, email TEXT UNIQUE)")
            for account in accounts {
                try db.execute(sql: "INSERT OR IGNORE INTO accounts VALUES (?, 'apple', ?, ?)", arguments: [account.id, account.sub, account.email])
            }
            if let sub = early?.recipientSub { try db.execute(sql: "INSERT INTO accounts VALUES ('acct-new-1', 'apple', ?, NULL)", arguments: [sub]) }
        }
        let mapping = try ApplyMapping(
            table: "accounts", key: "account_id=id", set: ["recipient_sub=apple_sub", "email=email"], condition: "provider = 'apple'")
        let reader = try SQLiteAccounts(path: app, mapping: mapping, writable: false)
        let planRun = ApplyRun(ledger: ledger, projection: projection, table: reader, options: ApplyRun.Options(), logger: logger)
        let plan = try await planRun.plan()
        let planned = try projection.read(ledger) { snapshot, _ in try ApplyListing(plan: plan, snapshot: snapshot) }
        say("\n$ handover apply \(Self.options)")
        say("  (team B, the app's own accounts: app.sqlite has a second account for a user who signed in early)")
        say(indented(ApplySummary.plan(plan, planned, table: reader, undo: nil)))
        let writer = try SQLiteAccounts(path: app, mapping: mapping, writable: true)
        let result = try await ApplyRun(ledger: ledger, projection: projection, table: writer, options: ApplyRun.Options(), logger: logger).commit()
        let listing = try projection.read(ledger) { snapshot, _ in try ApplyListing(result: result, snapshot: snapshot) }
        say("\n$ handover apply \(Self.options) --commit")
        say(
            "  (exit \(result.exitStatus.rawValue): the collision is left for a person to merge; "
                + "\(counted(result.counts[.email]?[.applied] ?? 0, "relay address", "relay addresses")) of team B's set)")
        say(indented(ApplySummary.commit(result, listing, table: writer, ledger: recipientDir, undo: nil)))
    }

    /// `text` indented, its long lines wrapped (a line that fits keeps its columns).
    private func indented(_ text: String) -> String {
        text.split(separator: "\n").map { line in
            line.count + 2 <= TerminalText.width ? "  " + line : TerminalText.wrap("  " + line, continuation: "      ")
        }.joined(separator: "\n")
    }
}
