import Basics
import Foundation
import TestSupport
import Testing

@testable import Ledger

/// `export --format postgres` into a real PostgreSQL server (the cluster `tools/test` starts),
/// checked against `query state`, `report` and the events, read back through `psql`.
@Suite("export into PostgreSQL", .enabled(if: PostgresTestDatabase.isAvailable, "needs the cluster tools/test starts (HANDOVER_TEST_POSTGRES_DIR)"))
struct PostgresExportTests {
    let dir = TemporaryDirectory()

    /// `value` as canonical JSON text, for comparing rows as sets.
    static func text(_ value: JSONValue) -> String { String(decoding: value.canonicalBytes, as: UTF8.self) }

    /// The users columns that hold times, rendered back as the ledger writes them.
    static let timeColumns: Set<String> = [
        "migrated_at", "migrated_recorded_at", "consent_revoked_at", "account_deleted_at", "erased_at", "last_attempt_at", "applied_at",
        "email_applied_at", "email_forwarding_applied_at",
    ]

    static func rfc3339(_ column: String) -> String {
        #"to_char(\#(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')"#
    }

    private func json(_ args: String...) throws -> JSONValue {
        let r = try runProduct("handover", args)
        try #require(r.status == 0, "\(args): \(r.err)")
        return try JSONValue.parse(Array(r.out.utf8))
    }

    private func export(_ ledger: String, into db: PostgresTestDatabase, _ extra: String...) throws -> (status: Int32, out: String, err: String) {
        try runProduct("handover", ["export", "--ledger", ledger, "--format", "postgres", "--out", db.url] + extra, environment: db.environment)
    }

    /// Every users row, columns as `query state --format json` writes them.
    static func users(in db: PostgresTestDatabase, columns: [String]) throws -> [JSONValue] {
        let list = columns.map { timeColumns.contains($0) ? "\(rfc3339($0)) AS \($0)" : $0 }.joined(separator: ", ")
        return try db.rows("SELECT \(list) FROM users ORDER BY user_key")
    }

    /// `query state` as the export carries it: an address only in clear and only with personal
    /// data, never "(sealed)" or "(erased)".
    static func exportedState(_ state: [JSONValue], personalData: Bool = true) -> [JSONValue] {
        state.map { row in
            guard case .object(var fields) = row else { return row }
            if let email = fields["email"]?.stringValue, !email.contains("@") || !personalData { fields["email"] = .null }
            return .object(fields)
        }
    }

    @Test(
        "demo ledger: every event once, users equal to query state column for column, the views equal to report --format json; an erased user's address leaves every table"
    )
    func demoLedgerInPostgres() throws {
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        let db = try PostgresTestDatabase()
        let first = try export(ledger, into: db, "--include-personal-data")
        try #require(first.status == 0, "\(first.err)")
        #expect(first.out.contains("postgres://handover:***@") || !first.out.contains(db.password))

        let report = try json("report", "--ledger", ledger, "--format", "json")
        let head = try #require(report["through_sequence"]?.intValue)
        #expect(try db.scalar("SELECT count(*) FROM events") == String(head))
        #expect(try db.scalar("SELECT count(DISTINCT seq) || ' ' || min(seq) || ' ' || max(seq) FROM events") == "\(head) 1 \(head)")
        #expect(try db.scalar("SELECT value FROM export_meta WHERE key = 'last_sequence'") == String(head))
        #expect(
            try Self.keptRows(in: db) == KeptRow.all(inLedgerAt: ledger, opened: true).map(\.cells),
            "every row the events keep beside them, once, the addresses opened")

        // Users, column for column.
        let state = try json("query", "state", "--ledger", ledger, "--format", "json").arrayValue ?? []
        let columns = try #require(state.first?.objectValue.map { Array($0.keys) })
        let rows = try Self.users(in: db, columns: columns)
        #expect(rows.count == state.count)
        #expect(rows == Self.exportedState(state))
        let withAddress = rows.filter { $0["email"]?.stringValue?.contains("@") == true }
        #expect(!withAddress.isEmpty, "the demo's users have addresses exported with --include-personal-data")

        try checkViews(db, against: report, ledger: ledger)

        // Erase a user whose address is in the database: after the next export it is in no table.
        let victim = try #require(withAddress.first)
        let address = try #require(victim["email"]?.stringValue)
        let identifier = try #require(victim["recipient_sub"]?.stringValue ?? victim["account_id"]?.stringValue)
        #expect(try tablesHolding(address, in: db).contains("events"), "the address is in an event before the erasure")
        #expect(try tablesHolding(address, in: db).contains("users"))
        let erased = try runProduct("handover", ["erase", "--ledger", ledger, identifier])
        try #require(erased.status == 0, "\(erased.err)")
        let next = try export(ledger, into: db, "--since-last", "--include-personal-data")
        try #require(next.status == 0, "\(next.err)")
        #expect(try tablesHolding(address, in: db).isEmpty)
        #expect(try db.scalar("SELECT count(*) FROM events") == String(head + 1))
        let after = try json("query", "state", "--ledger", ledger, "--format", "json").arrayValue ?? []
        #expect(try Self.users(in: db, columns: columns) == Self.exportedState(after))
        try checkViews(db, against: try json("report", "--ledger", ledger, "--format", "json"), ledger: ledger)

        // The same database refuses a first export and an export without personal data.
        let again = try export(ledger, into: db)
        #expect(again.status == 2 && again.err.contains("already holds an export"), "\(again.err)")
        let policy = try export(ledger, into: db, "--since-last")
        #expect(policy.status == 2 && policy.err.contains("--include-personal-data"), "\(policy.err)")
    }

    /// The names of the tables where `text` occurs in some row.
    private func tablesHolding(_ text: String, in db: PostgresTestDatabase) throws -> [String] {
        let tables = try db.scalar(
            "SELECT string_agg(table_name, ' ') FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'")
        return try tables.split(separator: " ").map(String.init).filter { table in
            try db.scalar("SELECT count(*) FROM \(table) AS t WHERE t::text LIKE '%' || '\(text)' || '%'") != "0"
        }
    }

    /// The reporting views hold the report's figures.
    private func checkViews(_ db: PostgresTestDatabase, against report: JSONValue, ledger: String) throws {
        let summary = try #require(try db.rows("SELECT * FROM report_summary").first)
        for key in [
            "through_sequence", "users_known", "migrated", "consent_revoked", "accounts_deleted", "users_erased", "unmatched_notifications",
            "sign_ins_rejected", "notifications_rejected",
        ] {
            #expect(summary[key]?.intValue == report[key]?.intValue, "\(key)")
        }
        #expect(summary["pending"]?.intValue == Int64(report["pending"]?.arrayValue?.count ?? -1))
        #expect(summary["unmatched_users"]?.intValue == Int64(report["unmatched_users"]?.arrayValue?.count ?? -1))
        let byType = report["notifications_by_type"]?.arrayValue ?? []
        #expect(summary["notifications_received"]?.intValue == byType.reduce(0) { $0 + ($1["received"]?.intValue ?? 0) })

        var paths: [String: JSONValue] = [:]
        for row in try db.rows("SELECT migrated_via, users FROM report_migrated_by_path") {
            paths[row["migrated_via"]?.stringValue ?? ""] = row["users"]
        }
        #expect(JSONValue.object(paths) == report["migrated_by_path"])

        let deadline = try #require(
            try db.rows("SELECT migrated_before_deadline, migrated_after_deadline, \(Self.rfc3339("deadline")) AS deadline FROM report_deadline")
                .first)
        #expect(deadline["migrated_before_deadline"] == report["migrated_before_deadline"])
        #expect(deadline["migrated_after_deadline"] == report["migrated_after_deadline"])
        #expect(deadline["deadline"] == report["window"]?["deadline"])

        let days = try db.rows(
            "SELECT day::text AS date, migrated, cumulative, \(Self.rfc3339("deadline")) AS deadline FROM report_migrations_per_day ORDER BY day")
        #expect(
            days.map { JSONValue.object(["date": $0["date"]!, "migrated": $0["migrated"]!, "cumulative": $0["cumulative"]!]) }
                == report["migrations_per_day"]?.arrayValue)
        #expect(days.allSatisfy { $0["deadline"] == report["window"]?["deadline"] })

        #expect(
            Set(try db.rows("SELECT last_error_class, users FROM report_failures_by_class").map(Self.text))
                == Set((report["failures_by_class"]?.arrayValue ?? []).map(Self.text)))
        var pendingByClass: [String: Int64] = [:]
        for row in report["pending"]?.arrayValue ?? [] { pendingByClass[row["last_error_class"]?.stringValue ?? "(none)", default: 0] += 1 }
        var viewByClass: [String: Int64] = [:]
        for row in try db.rows("SELECT last_error_class, users FROM report_pending_by_error_class") {
            viewByClass[row["last_error_class"]?.stringValue ?? "(none)"] = row["users"]?.intValue
        }
        #expect(viewByClass == pendingByClass)

        let times = ["first_occurred", "last_occurred", "first_recorded", "last_recorded"].map { "\(Self.rfc3339($0)) AS \($0)" }.joined(
            separator: ", ")
        let notifications = try db.rows("SELECT notification_type, received, since_migration, \(times) FROM report_notifications_by_type")
        #expect(Set(notifications.map(Self.text)) == Set(byType.map(Self.text)))

        // Per day and type, against the events themselves.
        let events = try json("query", "events", "--ledger", ledger, "--type", "notification-received", "--format", "json").arrayValue ?? []
        var perDay: [String: Int64] = [:]
        for event in events {
            let day = String((event["body"]?["event_time"]?.stringValue ?? "").prefix(10))
            perDay[day + " " + (event["body"]?["notification_type"]?.stringValue ?? ""), default: 0] += 1
        }
        var viewPerDay: [String: Int64] = [:]
        for row in try db.rows("SELECT day::text AS day, notification_type, received FROM report_notifications_per_day") {
            viewPerDay[(row["day"]?.stringValue ?? "") + " " + (row["notification_type"]?.stringValue ?? "")] = row["received"]?.intValue
        }
        #expect(viewPerDay == perDay)
    }

    @Test(
        "--since-last after more events adds exactly those rows (4,000 a round, 5 kills; 10,000 and 10 at full size): SIGKILLed before it commits and rerun, every sequence is there exactly once"
    )
    func sinceLastSurvivesKills() throws {
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        let db = try PostgresTestDatabase()
        let first = try export(ledger, into: db)
        try #require(first.status == 0, "\(first.err)")
        let base = try #require(Int(try db.scalar("SELECT count(*) FROM events")))
        let added = TestSize.pick(quick: 4_000, full: 10_000)
        var appends = 0
        func appendMore() throws {
            appends += 1
            let appended = try runProduct("handover-lab", ["append", "--ledger", ledger, "--count", String(added), "--prefix", "pg\(appends)"])
            try #require(appended.status == 0, "\(appended.err)")
        }
        try appendMore()

        // How long one whole run takes, into a scratch database: the kills land within it.
        let scratch = try PostgresTestDatabase()
        let started = Date()
        let whole = try export(ledger, into: scratch)
        try #require(whole.status == 0, "\(whole.err)")
        let duration = max(Date().timeIntervalSince(started), 0.2)

        // A kill counts when the killed run had committed nothing: the database holds what it
        // held before. A run that committed first leaves nothing new for the next: more events
        // are appended, so that every round has its run to interrupt.
        let wanted = TestSize.pick(quick: 5, full: 10)
        var landed = 0
        var rounds = 0
        while landed < wanted, rounds < 4 * wanted {
            rounds += 1
            let before = try db.scalar("SELECT count(*) FROM events")
            let process = try RunningProduct(
                "handover", ["export", "--ledger", ledger, "--format", "postgres", "--out", db.url, "--since-last"], environment: db.environment)
            let ended = PhaseKill.kill(process, once: { true }, spread: UInt32(duration * 1_000_000))
            let count = try db.scalar("SELECT count(*) FROM events")
            let all = String(base + appends * added)
            // Whatever the moment, the database holds what it held or everything, never part.
            #expect(count == before || count == all, "after a kill: \(count) events, \(before) before, \(all) in the ledger")
            if ended.signalled, count == before { landed += 1 }
            if count == all { try appendMore() }
        }
        #expect(landed >= wanted, "\(PhaseKill.tally(landed, of: rounds, in: "before it committed"))")
        let last = try export(ledger, into: db, "--since-last")
        try #require(last.status == 0, "\(last.err)")
        let head = base + appends * added
        #expect(
            try db.scalar("SELECT count(*) || ' ' || count(DISTINCT seq) || ' ' || min(seq) || ' ' || max(seq) FROM events")
                == "\(head) \(head) 1 \(head)")
        #expect(try db.scalar("SELECT sum(events_added) FROM exports WHERE from_sequence > 1") == String(appends * added))
        let state = try json("query", "state", "--ledger", ledger, "--format", "json").arrayValue ?? []
        let columns = try #require(state.first?.objectValue.map { Array($0.keys) })
        #expect(try Self.users(in: db, columns: columns) == Self.exportedState(state, personalData: false))
    }

    /// Where a test kills an export run.
    enum KillPoint: CustomStringConvertible {
        /// Shortly after it starts, before it has committed anything of its own.
        case beforeItsFirstCommit
        /// At a random moment within the slice after the first one it commits.
        case betweenSlices
        /// In its last transaction, which writes the users: the test holds a lock on `users`
        /// from before that transaction begins (once the slice before the last is reported)
        /// until the kill, so the kill lands there on a fast machine as on a slow one.
        case inItsLastTransaction(afterReporting: Int, slice: Int)

        var description: String {
            switch self {
            case .beforeItsFirstCommit: "before its first commit"
            case .betweenSlices: "between slices"
            case .inItsLastTransaction: "in its last transaction"
            }
        }
    }

    /// Starts an export run and SIGKILLs it at `point`; the last slice it reported committed.
    private func killed(_ arguments: [String], _ db: PostgresTestDatabase, at point: KillPoint, sliceSeconds: Double) throws -> Int {
        let export = try RunningProduct("handover", arguments, environment: db.environment)
        var held: PostgresHeldLock?
        switch point {
        case .beforeItsFirstCommit:
            usleep(useconds_t.random(in: 0...50_000))
        case .betweenSlices:
            while export.isRunning && !export.output.contains("Committed events") { usleep(5_000) }
            usleep(useconds_t(Double.random(in: 0...sliceSeconds) * 1_000_000))
        case .inItsLastTransaction(let last, let slice):
            while export.isRunning && !export.output.contains("Committed events through sequence \(last - slice) ") { usleep(2_000) }
            held = try PostgresHeldLock(db, "LOCK TABLE users IN ACCESS EXCLUSIVE MODE")
            while export.isRunning && !export.output.contains("Committed events through sequence \(last) ") { usleep(2_000) }
            usleep(useconds_t.random(in: 0...30_000))
        }
        export.signal(SIGKILL)
        // Released once the kill is sent: what the export did until then is all it did.
        defer { held?.release() }
        return export.wait().out.split(separator: "\n").compactMap { line in
            line.hasPrefix("Committed events through sequence ") ? Int(line.dropFirst(34).prefix { $0.isNumber }) : nil
        }.last ?? 0
    }

    /// The export's high-water mark, 0 before it has one; and whether it is complete.
    private func progress(_ db: PostgresTestDatabase) throws -> (mark: Int, complete: Bool) {
        guard try db.scalar("SELECT to_regclass('export_meta') IS NOT NULL") == "t" else { return (0, false) }
        return (
            Int(try db.scalar("SELECT coalesce((SELECT value FROM export_meta WHERE key = 'last_sequence'), '0')")) ?? 0,
            try db.scalar("SELECT count(*) FROM export_meta WHERE key = 'state'") == "0"
        )
    }

    @Test(
        "a first export in slices (12,000 events in slices of 1,500; 40,000 in slices of 4,000 at full size), SIGKILLed before its first commit, between slices and in its last transaction: each kill keeps every slice committed before it, the same command continues where it stopped, and every event ends up exactly once"
    )
    func firstExportSurvivesKillsInSlices() throws {
        let ledger = dir.sub("sliced")
        let events = TestSize.pick(quick: 12_000, full: 40_000)
        let slice = TestSize.pick(quick: 1_500, full: 4_000)
        let appended = try runProduct("handover-lab", ["append", "--ledger", ledger, "--count", String(events), "--prefix", "slice", "--create"])
        try #require(appended.status == 0, "\(appended.err)")
        let head = events + 1
        let db = try PostgresTestDatabase()
        let arguments = ["export", "--ledger", ledger, "--format", "postgres", "--out", db.url, "--slice", String(slice)]

        // How long one whole first export takes, into a scratch database: a slice's share of it
        // is how long a kill between slices waits at most.
        let scratch = try PostgresTestDatabase()
        let started = Date()
        let whole = try runProduct(
            "handover", ["export", "--ledger", ledger, "--format", "postgres", "--out", scratch.url, "--slice", String(slice)],
            environment: scratch.environment)
        try #require(whole.status == 0, "\(whole.err)")
        let sliceSeconds = max(Date().timeIntervalSince(started), 0.5) / Double(head / slice)

        var marks: [Int] = []
        var landed: [String] = []
        let last = head - head % slice
        for point: KillPoint in [.beforeItsFirstCommit, .betweenSlices, .betweenSlices, .inItsLastTransaction(afterReporting: last, slice: slice)]
        where try !progress(db).complete {
            let before = try progress(db).mark
            let reported = try killed(arguments, db, at: point, sliceSeconds: sliceSeconds)
            let (after, complete) = try progress(db)
            marks.append(after)
            // Where it landed, read from what it left: nothing of its own committed, slices of its
            // own committed, or every slice committed and the users not.
            switch point {
            case .beforeItsFirstCommit: if after == before, !complete { landed.append("\(point)") }
            case .betweenSlices: if after > before, after < last, !complete { landed.append("\(point)") }
            case .inItsLastTransaction: if after == last, !complete, try db.scalar("SELECT count(*) FROM users") == "0" { landed.append("\(point)") }
            }
            if try db.scalar("SELECT to_regclass('events') IS NULL") == "t" {
                #expect(after == 0 && reported == 0, "killed \(point) before anything was committed: nothing is there")
                continue
            }
            if complete {
                #expect(after == head, "killed \(point), a run that ended had exported everything")
                continue
            }
            // Stopped inside the first export: whole slices, every one it reported committed and
            // at most one more (committed, killed before it said so); no users yet.
            let known = max(reported, before)
            #expect(
                after % slice == 0 && after >= known && after - known <= slice,
                "killed \(point): mark \(after), last reported \(reported), before the run \(before)")
            #expect(try db.scalar("SELECT count(*) || ' ' || coalesce(max(seq), 0) FROM events") == "\(after) \(after)", "killed \(point)")
            #expect(try db.scalar("SELECT count(*) FROM users") == "0", "killed \(point)")
        }
        #expect(marks == marks.sorted(), "no kill undid a committed slice: \(marks)")
        #expect(
            landed == ["before its first commit", "between slices", "between slices", "in its last transaction"],
            "each kill landed where it was meant to: \(landed), marks \(marks)")
        print("sliced first export: marks after each kill \(marks) of \(head) events, slices of \(slice)")
        let before = try progress(db).mark
        if try !progress(db).complete {
            let rest = try runProduct("handover", arguments, environment: db.environment)
            #expect(rest.status == 0, "the same command finishes the export: \(rest.err)")
        }
        #expect(
            try db.scalar("SELECT count(*) || ' ' || count(DISTINCT seq) || ' ' || min(seq) || ' ' || max(seq) FROM events")
                == "\(head) \(head) 1 \(head)")
        #expect(try db.scalar("SELECT count(*) FROM export_meta WHERE key = 'state'") == "0")
        if before < head {
            #expect(
                try db.scalar("SELECT from_sequence || ' ' || events_added FROM exports ORDER BY export_id DESC LIMIT 1")
                    == "\(before + 1) \(head - before)",
                "the last run redid nothing that was committed")
        }
        #expect(try db.scalar("SELECT count(*) FROM users") == (try scratch.scalar("SELECT count(*) FROM users")))
        #expect(
            try db.scalar("SELECT count(*) FROM pg_indexes WHERE tablename IN ('events', 'users')")
                == (try scratch.scalar("SELECT count(*) FROM pg_indexes WHERE tablename IN ('events', 'users')")))
    }

    @Test(
        "the rows events keep go in a run's last transaction: a --since-last run killed there, after its slices, leaves none of its rows, and the rerun adds each row once, also of the events the slices committed"
    )
    func keptRowsSurviveAKillInTheLastTransaction() throws {
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        let app = try DemoLedger.copy(file: "app.sqlite", into: dir)
        let db = try PostgresTestDatabase()
        let arguments = ["export", "--ledger", ledger, "--format", "postgres", "--out", db.url, "--slice", "100"]
        func head() throws -> Int {
            Int(try #require(try json("query", "events", "--ledger", ledger, "--format", "json", "--limit", "1").arrayValue?.first?["seq"]?.intValue))
        }
        var run = try runProduct("handover", arguments, environment: db.environment)
        try #require(run.status == 0, "\(run.err)")
        let held = try KeptRow.all(inLedgerAt: ledger)
        #expect(try Self.keptRows(in: db) == held.map(\.cells))

        // An apply run keeps new rows in the first events after the export, and more events
        // follow: those are committed in the run's first slice, their rows in its last transaction.
        let apply = try runProduct(
            "handover",
            [
                "apply", "--ledger", ledger, "--to", app, "--table", "accounts", "--key", "account_id=id", "--set", "recipient_sub=apple_sub",
                "--commit",
            ])
        #expect(apply.status == 0 || apply.status == 1, "\(apply.err)")
        let appended = try runProduct("handover-lab", ["append", "--ledger", ledger, "--count", "250", "--prefix", "rows"])
        try #require(appended.status == 0, "\(appended.err)")
        let before = Int(try db.scalar("SELECT value FROM export_meta WHERE key = 'last_sequence'")) ?? 0
        let mark = try lastSlice(after: before, through: try head(), slice: 100)
        try killInItsLastTransaction(arguments + ["--since-last"], db, afterSliceThrough: mark)
        #expect(try db.scalar("SELECT value FROM export_meta WHERE key = 'last_sequence'") == String(mark), "the slices stay committed")
        #expect(try Self.keptRows(in: db) == held.map(\.cells), "the killed run added no row")

        run = try runProduct("handover", arguments + ["--since-last"], environment: db.environment)
        try #require(run.status == 0, "\(run.err)")
        let all = try KeptRow.all(inLedgerAt: ledger)
        #expect(all.count > held.count && all.contains { $0.sequence > before && $0.sequence <= mark }, "rows of events in the committed slices")
        #expect(try Self.keptRows(in: db) == all.map(\.cells))
        #expect(run.out.contains("\(all.count - held.count) kept rows added"), "\(run.out)")
    }

    /// Runs the export `arguments` while a lock on `exports`, taken before it starts, holds it in
    /// its last transaction (the only one that writes there) whatever the machine's speed, and
    /// SIGKILLs it there once it has said the slice through `mark` is committed: nothing of that
    /// transaction stays.
    private func killInItsLastTransaction(_ arguments: [String], _ db: PostgresTestDatabase, afterSliceThrough mark: Int) throws {
        let lock = try PostgresHeldLock(db, "LOCK TABLE exports IN ACCESS EXCLUSIVE MODE")
        defer { lock.release() }
        let run = try RunningProduct("handover", arguments, environment: db.environment)
        let said = "Committed events through sequence \(mark) "
        let deadline = Date().addingTimeInterval(300)
        while run.isRunning && !run.output.contains(said) && Date() < deadline { usleep(2_000) }
        let reached = run.output.contains(said)
        run.signal(SIGKILL)
        lock.release()
        let ended = run.wait()
        try #require(reached, "the run never said it committed the slice through \(mark): \(ended.out)\(ended.err)")
    }

    /// The last slice a run exporting the events after `after` through `last` in slices of
    /// `slice` says it committed (the rest goes in its last transaction); it must have one.
    private func lastSlice(after: Int, through last: Int, slice: Int) throws -> Int {
        try #require(last - after > slice, "\(last - after) events make no slice of \(slice) before the last transaction")
        return after + (last - after - 1) / slice * slice
    }

    @Test("a first export with personal data, killed after a slice, then a user erased: the rerun leaves the erased user's address in no table")
    func resumedExportForgetsErasedAddresses() throws {
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        let db = try PostgresTestDatabase()
        let arguments = ["export", "--ledger", ledger, "--format", "postgres", "--out", db.url, "--include-personal-data", "--slice", "50"]
        _ = try killed(arguments, db, at: .betweenSlices, sliceSeconds: 0.05)
        let (mark, complete) = try progress(db)
        try #require(mark >= 50 && !complete, "the kill left a first export in slices (mark \(mark))")
        let found = try db.rows(
            "SELECT recipient_sub, event_json -> 'body' ->> 'email' AS email FROM events WHERE type = 'transfer-id-exchanged' AND event_json -> 'body' ->> 'email' LIKE '%@%' LIMIT 1"
        )
        let row = try #require(found.first?.objectValue)
        let sub = try #require(row["recipient_sub"]?.stringValue)
        let email = try #require(row["email"]?.stringValue)
        let erased = try runProduct("handover", ["erase", sub, "--ledger", ledger])
        try #require(erased.status == 0, "\(erased.err)")

        let rest = try runProduct("handover", arguments, environment: db.environment)
        #expect(rest.status == 0, "\(rest.err)")
        let tables = try db.rows("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").compactMap {
            $0.objectValue?["tablename"]?.stringValue
        }
        for table in tables {
            #expect(try db.scalar("SELECT count(*) FROM \(table) AS t WHERE t::text LIKE '%\(email)%'") == "0", "\(email) is still in \(table)")
        }
        #expect(try db.scalar("SELECT email IS NULL FROM users WHERE recipient_sub = '\(sub)'") == "t")
    }

    @Test(
        "an export of an older schema version is brought to this one by --since-last, also when the upgrading run is killed after its slices: the columns and event_rows added, every user written again, the views made again, every event and kept row once",
        arguments: [1, 2, 3, 4])
    func olderSchemaVersionIsUpgraded(version: Int) throws {
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        let db = try PostgresTestDatabase()
        let first = try export(ledger, into: db)
        try #require(first.status == 0, "\(first.err)")
        // What that version left: version 4 had no email or forwarding outcomes; version 3 no
        // event_rows either; version 2 no apply_outcome or applied_at either; version 1 no
        // exact_text and no users_sequence either.
        var statements = [
            "ALTER TABLE users DROP COLUMN email_apply_outcome CASCADE", "ALTER TABLE users DROP COLUMN email_applied_at CASCADE",
            "ALTER TABLE users DROP COLUMN email_forwarding_apply_outcome CASCADE",
            "ALTER TABLE users DROP COLUMN email_forwarding_applied_at CASCADE",
            "UPDATE export_meta SET value = '\(version)' WHERE key = 'schema_version'",
            "UPDATE export_meta SET value = '4' WHERE key = 'views_version'",
        ]
        if version <= 3 { statements.append("DROP TABLE event_rows") }
        if version <= 2 {
            statements += [
                "ALTER TABLE users DROP COLUMN apply_outcome CASCADE", "ALTER TABLE users DROP COLUMN applied_at CASCADE",
                "UPDATE export_meta SET value = '\(version + 1)' WHERE key = 'views_version'",
            ]
        }
        if version == 1 {
            statements += [
                "ALTER TABLE users DROP COLUMN exact_text CASCADE", "ALTER TABLE events DROP COLUMN exact_text",
                "DELETE FROM export_meta WHERE key = 'users_sequence'", "UPDATE export_meta SET value = '1' WHERE key = 'views_version'",
            ]
        }
        for statement in statements { _ = try db.scalar(statement) }
        let before = Int(try db.scalar("SELECT value FROM export_meta WHERE key = 'last_sequence'")) ?? 0
        let appended = try runProduct("handover-lab", ["append", "--ledger", ledger, "--count", "250", "--prefix", "v\(version)"])
        try #require(appended.status == 0, "\(appended.err)")
        let head = try #require(
            try json("query", "events", "--ledger", ledger, "--format", "json", "--limit", "1").arrayValue?.first?["seq"]?.intValue)

        // The upgrade commits with the run's first slice; killed after its slices, the run leaves
        // this version's tables, and its rerun still writes every user and every kept row.
        let sliced = ["export", "--ledger", ledger, "--format", "postgres", "--out", db.url, "--since-last", "--slice", "100"]
        try killInItsLastTransaction(sliced, db, afterSliceThrough: try lastSlice(after: before, through: Int(head), slice: 100))
        #expect(try db.scalar("SELECT value FROM export_meta WHERE key = 'schema_version'") == "5")
        if version <= 3 { #expect(try db.scalar("SELECT count(*) FROM event_rows") == "0") }
        let upgraded = try export(ledger, into: db, "--since-last")
        #expect(upgraded.status == 0, "\(upgraded.err)")
        #expect(try db.scalar("SELECT value FROM export_meta WHERE key = 'schema_version'") == "5")
        #expect(try db.scalar("SELECT value FROM export_meta WHERE key = 'views_version'") == "5")
        #expect(
            try db.scalar(
                "SELECT count(*) FROM information_schema.columns WHERE column_name = 'exact_text' AND table_name IN ('events', 'users', 'report_migrated_users')"
            ) == "3")
        #expect(
            try db.scalar(
                "SELECT count(*) FROM information_schema.columns WHERE column_name IN ('apply_outcome', 'applied_at', 'email_apply_outcome', 'email_applied_at', 'email_forwarding_apply_outcome', 'email_forwarding_applied_at') AND table_name IN ('users', 'report_migrated_users')"
            ) == "12")
        #expect(try db.scalar("SELECT count(*) FROM information_schema.views WHERE table_schema = 'public'") == "10")
        #expect(try db.scalar("SELECT count(*) || ' ' || count(DISTINCT seq) || ' ' || max(seq) FROM events") == "\(head) \(head) \(head)")
        #expect(try Self.keptRows(in: db) == KeptRow.all(inLedgerAt: ledger).map(\.cells), "every kept row of the events the export held")
        let state = try json("query", "state", "--ledger", ledger, "--format", "json").arrayValue ?? []
        let columns = try #require(state.first?.objectValue.map { Array($0.keys) })
        #expect(try Self.users(in: db, columns: columns) == Self.exportedState(state, personalData: false))
    }

    /// `event_rows` by seq and row_index: seq, row_index and line, each as text.
    static func keptRows(in db: PostgresTestDatabase) throws -> [[String]] {
        try db.rows("SELECT seq::text AS seq, row_index::text AS row_index, line FROM event_rows ORDER BY event_rows.seq, event_rows.row_index").map {
            row in
            ["seq", "row_index", "line"].map { row[$0]?.stringValue ?? "?" }
        }
    }

    @Test("the password is never printed: a refused login names the URL masked")
    func passwordMasked() throws {
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        let db = try PostgresTestDatabase()
        let secret = "wrong-Secret-\(UInt32.random(in: 1000...9999))"
        let withSecret = db.url.replacingOccurrences(of: "postgres://handover@", with: "postgres://handover:\(secret)@")
        let refused = try runProduct("handover", ["export", "--ledger", ledger, "--format", "postgres", "--out", withSecret])
        #expect(refused.status == 1, "\(refused.err)")
        #expect(!refused.err.contains(secret) && !refused.out.contains(secret))
        #expect(refused.err.contains("postgres://handover:***@"), "\(refused.err)")
        #expect(refused.err.contains("password authentication failed"), "\(refused.err)")

        // From a password file (mode 0600), and refused from one others may read.
        let file = dir.sub("pgpass")
        let host = try #require(URLComponents(string: db.url)?.host)
        let port = try #require(URLComponents(string: db.url)?.port)
        try "# comment\n\(host):\(port):*:handover:\(db.password)\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o644)
        let arguments = ["export", "--ledger", ledger, "--format", "postgres", "--out", db.url]
        let loose = try runProduct("handover", arguments, environment: ["PGPASSFILE": file], unsetting: ["PGPASSWORD"])
        #expect(loose.status == 2 && loose.err.contains("chmod 600"), "\(loose.err)")
        chmod(file, 0o600)
        let process = try runProduct("handover", arguments, environment: ["PGPASSFILE": file], unsetting: ["PGPASSWORD"])
        #expect(process.status == 0, "\(process.err)")
        #expect(!process.out.contains(db.password))
    }

    @Test("sslmode as libpq's: the cluster takes TCP logins over TLS only; disable is refused, verify-full needs the certificate's root")
    func tlsModes() throws {
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        let certificate = try #require(PostgresTestDatabase.clusterDirectory) + "/server.crt"
        func export(_ mode: String) throws -> (status: Int32, out: String, err: String) {
            let db = try PostgresTestDatabase()
            let url = db.url.replacingOccurrences(of: "sslmode=require", with: mode)
            return try runProduct("handover", ["export", "--ledger", ledger, "--format", "postgres", "--out", url], environment: db.environment)
        }
        let plain = try export("sslmode=disable")
        #expect(plain.status == 1 && plain.err.contains("no encryption"), "\(plain.err)")
        let unverified = try export("sslmode=verify-full")
        #expect(unverified.status == 1 && unverified.err.contains("CERTIFICATE_VERIFY_FAILED"), "\(unverified.err)")
        for mode in ["sslmode=require", "sslmode=verify-ca&sslrootcert=\(certificate)", "sslmode=verify-full&sslrootcert=\(certificate)"] {
            let result = try export(mode)
            #expect(result.status == 0, "\(mode): \(result.err)")
        }
    }
}
