import Apply
import ArgumentParser
import Basics
import Foundation
import Ledger
import Logging
import PostgresAccess
import Projections
import Reporting

/// `handover apply`: the last step, each migrated user's new `sub` set on their account in the
/// app's own database, planned first, recorded batch by batch, resumable and undoable.
struct ApplyCommand: AsyncParsableCommand, LedgerCommand {
    var ledgerRole: LedgerCreated.Role? { .recipient }

    enum ListFormat: String, ExpressibleByArgument, CaseIterable {
        case text, csv, json
    }

    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract:
            "Set each migrated user's new sub, and their relay address, on their account in the app's own database (plan first; --commit to write).",
        discussion: """
            --to names the app's database: a SQLite file, or a postgres:// URL (the password from the URL, \
            PGPASSWORD or ~/.pgpass, never printed or recorded). The mapping is named, never guessed: \
            --table accounts --key account_id=id, and one --set NAME=COLUMN for each value to set: \
            recipient_sub (the user's new sub), email (the private relay address team B's exchange or sign-in \
            gave, set only over a relay address or NULL: an address of the user's own is kept), \
            email_forwarding (whether Apple forwards mail to it: true/false in a boolean PostgreSQL column, \
            1/0 in SQLite). --where adds the operator's own SQL condition on the rows that may change (it is \
            run as written: it is trusted as the operator's SQL); every value is a bound parameter. Without \
            --commit nothing is written: the plan says, for each column, how many accounts would change, \
            already hold their value, keep their own address, have no account, or collide with another \
            account holding the new value, and which accounts keep a relay address no run replaces. With \
            --commit each batch is recorded in the ledger before it is sent (addresses sealed with the \
            user's key), written in one transaction with a marker row in the table handover_apply, each \
            column only where the account still holds what the plan read; run it again after a crash and it \
            goes on. --undo RUN restores every column one apply run wrote, under the same rule.
            """, exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions

    @Option(help: ArgumentHelp("The app's database: a SQLite file or a postgres:// URL.", valueName: "path-or-url"))
    var to: String

    @Option(help: ArgumentHelp("The accounts table.", valueName: "table"))
    var table: String

    @Option(help: ArgumentHelp("The column holding team A's account_id: account_id=COLUMN.", valueName: "account_id=column"))
    var key: String

    @Option(
        help: ArgumentHelp(
            "A value and the column that takes it: recipient_sub=COLUMN, email=COLUMN, email_forwarding=COLUMN (repeat for each).",
            valueName: "name=column"))
    var set: [String] = []

    @Option(
        name: .customLong("where"),
        help: ArgumentHelp("An SQL condition of your own on the rows that may change, e.g. \"provider = 'apple'\".", valueName: "sql"))
    var condition: String?

    @Option(help: ArgumentHelp("Only the users whose account_id is listed in this file, one a line.", valueName: "file"))
    var users: String?

    @Flag(
        name: .customLong("since-last"),
        help: "For each column, only users migrated, or whose value changed, since the last finished apply to this table that set it began.")
    var sinceLast = false

    @Flag(help: "Write the changes (without it, only the plan is shown).")
    var commit = false

    @Option(help: ArgumentHelp("Restore every value the apply run RUN replaced.", valueName: "run"))
    var undo: String?

    @Option(name: .customLong("batch-size"), help: ArgumentHelp("Accounts per transaction.", valueName: "n"))
    var batchSize = 1_000

    @Option(help: "text (counts and collisions), csv or json: one line a cell, an account's column (of a commit, the cells not applied).")
    var format: ListFormat = .text

    func validate() throws {
        guard (1...ApplyIntended.maximumRows).contains(batchSize) else {
            throw ValidationError("--batch-size takes 1 to \(ApplyIntended.maximumRows)")
        }
        if undo != nil && sinceLast { throw ValidationError("--since-last and --undo do not go together: an undo restores the run it names") }
    }

    func run() async throws {
        let mapping = try ApplyMapping(table: table, key: key, set: set, condition: condition)
        let (ledger, projection) = try ledgerOptions.open(commit ? .readWrite : .readOnly, for: self)
        defer { ledger.close() }
        var logger = Logger(label: "handover.apply")
        logger.logLevel = .warning
        let accounts = try users.map(Self.accounts(in:))
        let target = try await Self.open(to, mapping: mapping, writable: commit, logger: logger)
        var tables: [any AccountsTable] = [target]
        do {
            // A commit to PostgreSQL reads the next batch over a second connection while it writes.
            if commit, target is PostgresAccounts { tables.append(try await Self.open(to, mapping: mapping, writable: false, logger: logger)) }
            let run = ApplyRun(
                ledger: ledger, projection: projection, table: target, reader: tables.last,
                options: ApplyRun.Options(batchSize: batchSize, accounts: accounts, sinceLast: sinceLast, undo: undo), logger: logger)
            if commit {
                try await report(try await run.commit(), ledger: ledger, projection: projection, target: target)
            } else {
                let plan = try await run.plan()
                let listing = try projection.read(ledger) { snapshot, _ in try ApplyListing(plan: plan, snapshot: snapshot) }
                show(plan: plan, listing, target: target)
            }
        } catch {
            for table in tables { await table.close() }
            throw error
        }
        for table in tables { await table.close() }
    }

    /// The app's database `to` names, read-only unless `writable`.
    static func open(_ to: String, mapping: ApplyMapping, writable: Bool, logger: Logger) async throws -> any AccountsTable {
        if to.hasPrefix("postgres://") || to.hasPrefix("postgresql://") {
            return try await PostgresAccounts.connect(try PostgresTarget(url: to), mapping: mapping, writable: writable, logger: logger)
        }
        return try SQLiteAccounts(path: to, mapping: mapping, writable: writable)
    }

    /// The `account_id`s listed in `path`, one a line (blank lines skipped).
    static func accounts(in path: String) throws -> Set<String> {
        let bytes = try CommandLineFileError.reading("--users") { try FileBytes.readOnce(path, limit: AccountList.maximumFileBytes) }
        return try AccountList(bytes: bytes, path: path).accounts
    }

    private func show(plan: ApplyPlan, _ listing: ApplyListing, target: any AccountsTable) {
        switch format {
        case .csv: Console.data(listing.csv, terminator: "")
        case .json: Console.data(listing.jsonLines, terminator: "")
        case .text:
            Console.data(ApplySummary.plan(plan, listing, table: target, undo: undo) + "Nothing was changed. Run again with --commit to write.")
        }
    }

    private func report(_ result: ApplyRun.Result, ledger: Ledger, projection: UserProjection, target: any AccountsTable) async throws {
        let listing = try projection.read(ledger) { snapshot, _ in try ApplyListing(result: result, snapshot: snapshot) }
        switch format {
        case .csv: Console.data(listing.csv, terminator: "")
        case .json: Console.data(listing.jsonLines, terminator: "")
        case .text: Console.data(ApplySummary.commit(result, listing, table: target, ledger: ledgerOptions.directory, undo: undo), terminator: "")
        }
        if result.exitStatus != .success { throw CLIExit(result.exitStatus, nil) }
    }
}
