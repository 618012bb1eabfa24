import Foundation
import Ledger
import Logging
import NIOCore
import PostgresAccess
import PostgresNIO
import Relays

/// One connection to the export database, holding the exporters' advisory lock for as long
/// as it is open, through which export runs are made: each run one transaction per slice of
/// events, each carrying the high-water mark (`export_meta.last_sequence`) with its rows.
///
/// Used by one task at a time (a run, then the next); the connection's end is watched from
/// the event loop (``ConnectionWatch``), hence `@unchecked Sendable`.
final class PostgresExportSession: @unchecked Sendable {
    /// The key of the session-level advisory lock every exporter takes.
    static let lockKey: Int64 = 7_285_430_110_250

    let target: PostgresTarget
    private let connection: PostgresConnection
    private let logger: Logger
    private let watch: ConnectionWatch
    /// The last sequence this session exported, once it has run.
    private(set) var lastSequence: UInt64?

    private init(target: PostgresTarget, connection: PostgresConnection, logger: Logger) {
        self.target = target
        self.connection = connection
        self.logger = logger
        self.watch = ConnectionWatch(
            connection.closeFuture,
            closedError: ExportError(.io, "the connection to \(target.masked) was closed (the server stopped or restarted)"))
    }

    /// Connects and takes the advisory lock, or throws ``ExportError/Code/busy`` when another
    /// session holds it. While that session runs a statement, it waits up to `lockWait` first:
    /// an exporter killed in the middle of one (an index build) holds the lock until the server
    /// notices, when the statement ends. A session that holds it idle is a live exporter (a
    /// killed one's session ends as soon as the server reads from it): no wait.
    static func open(_ target: PostgresTarget, lockWait: Duration = .zero, logger: Logger) async throws -> PostgresExportSession {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: try target.configuration(), id: 1, logger: logger)
        } catch let error as ExportError {
            throw error
        } catch {
            throw PostgresFailure.exportError(error, doing: "connect to", target: target)
        }
        let session = PostgresExportSession(target: target, connection: connection, logger: logger)
        do {
            let deadline = ContinuousClock.now + lockWait
            while try await session.watch.run({ try await session.scalar("SELECT pg_try_advisory_lock(\(lockKey))", as: Bool.self) }) != true {
                let holder = try await session.watch.run { try await session.scalar(holderState, as: String.self) }
                guard ContinuousClock.now < deadline, holder == nil || holder == "active" else {
                    throw ExportError(
                        .busy,
                        "another exporter is writing into \(target.masked) (it holds advisory lock \(lockKey)\(lockWait > .zero ? ", and still did after \(lockWait.inSeconds.formatted()) s" : "")); stop it, or wait for it to finish"
                    )
                }
                try await Task.sleep(for: .milliseconds(250))
            }
        } catch {
            await session.close()
            throw PostgresFailure.exportError(error, doing: "take the exporters' lock in", target: target)
        }
        return session
    }

    /// What the session holding the exporters' lock is doing (`active`, `idle`, ...), as far as
    /// `pg_stat_activity` shows this user; no row when it shows nothing.
    private static let holderState = """
        SELECT coalesce(a.state, '') FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.classid = \(lockKey >> 32) AND l.objid = \(lockKey & 0xFFFF_FFFF) AND l.objsubid = 1
        """

    /// Closes the connection, which releases the lock (and rolls back an open transaction).
    func close() async {
        // Closing is the end either way: a connection that is already gone is closed.
        try? await connection.close()
    }

    /// Exports what `source` has after what the database holds. Without `sinceLast`, the
    /// database must hold no export yet, or a first export that stopped before it finished.
    ///
    /// The events go in transactions of `slice` events, each with the high-water mark
    /// (`export_meta.last_sequence`), so a run stopped at any moment redoes at most one slice;
    /// `committed` hears of each slice that is not the run's last. The last transaction also
    /// carries the rows the events keep beside them, the users the run's events changed, the
    /// rewrites of erased users' events, the indexes after a first load, the views and the row
    /// in `exports`.
    func run(
        _ source: ExportSource, identity: LedgerCreated, sinceLast: Bool, slice: Int, committed: @escaping @Sendable (UInt64) -> Void = { _ in }
    ) async throws -> ExportSummary {
        let handoff = BoundedRelay<CopyBatch>(capacity: 4)
        do {
            // The reader lets go of its LMDB transaction at once if the connection closes.
            let summary = try await watch.run(
                { [self] in
                    try await transactions(source, identity: identity, sinceLast: sinceLast, slice: slice, handoff: handoff, committed: committed)
                }, onClose: { handoff.abandon(because: CancellationError()) })
            lastSequence = summary.toSequence
            return summary
        } catch {
            // On a closed connection there is nothing to roll back: the server did. A failed
            // rollback ends the session too; the export's own error is what is reported.
            if !connection.isClosed { _ = try? await watch.run { [self] in try await execute("ROLLBACK") } }
            throw PostgresFailure.exportError(error, doing: "export into", target: target)
        }
    }

    /// The transactions of one run: slices of events, then the last one.
    private func transactions(
        _ source: ExportSource, identity: LedgerCreated, sinceLast: Bool, slice: Int, handoff: BoundedRelay<CopyBatch>,
        committed: (UInt64) -> Void
    ) async throws -> ExportSummary {
        try await execute("BEGIN")
        let start = try await begin(source, identity: identity, sinceLast: sinceLast)
        let reader = Task { [source, handoff] in
            try await PostgresExportSession.read(
                source, after: start.lastSequence, rowsAfter: start.rowsSequence, usersAfter: start.usersSequence, slice: slice, into: handoff)
        }
        let summary: ExportSummary
        do {
            let batches = BatchStream(handoff)
            var mark = start.lastSequence
            while try await batches.peek()?.kind == .events {
                mark += UInt64(try await copyEvents(batches, after: mark, upTo: slice))
                guard try await batches.peek()?.kind == .events else { break }
                try await setMeta([("last_sequence", String(mark))])
                try await execute("COMMIT")
                committed(mark)
                try await execute("BEGIN")
            }
            summary = try await finish(batches, start: start, reader: reader, source: source, identity: identity)
        } catch {
            handoff.abandon()
            // The reader stops on the abandoned handoff; the error that stopped the export is reported.
            _ = try? await reader.value
            throw error
        }
        try await execute("COMMIT")
        return summary
    }

    /// Where a run starts: what the database holds.
    private struct Start {
        /// The last event in the database.
        var lastSequence: UInt64
        /// The last event the `users` table reflects (behind `lastSequence` only after a run
        /// that committed slices of events and stopped before its users).
        var usersSequence: UInt64
        /// The last event whose kept rows `event_rows` holds (`export_meta.rows_sequence`, moved
        /// in a run's last transaction; 0 from the run that brought an earlier version to this one).
        var rowsSequence: UInt64
        /// A first export that has not finished: `users` is empty and has no indexes yet.
        var loading: Bool
        var meta: [String: String]
    }

    /// Inside the first transaction: reads the export's facts, or creates the tables of a
    /// first export (which stays `loading` until its last transaction), and brings an export
    /// of an earlier schema version to this one.
    private func begin(_ source: ExportSource, identity: LedgerCreated, sinceLast: Bool) async throws -> Start {
        let fresh = try await scalar("SELECT to_regclass('export_meta') IS NULL", as: Bool.self) ?? true
        if fresh {
            for statement in PostgresExportSchema.tableStatements { try await execute(statement) }
            let meta =
                facts(identity: identity, personalData: source.includePersonalData) + [
                    ("state", "loading"), ("last_sequence", "0"), ("users_sequence", "0"), ("rows_sequence", "0"),
                ]
            try await setMeta(meta)
            return Start(lastSequence: 0, usersSequence: 0, rowsSequence: 0, loading: true, meta: [:])
        }
        var meta: [String: String] = [:]
        for try await (key, value) in try await query("SELECT key, value FROM export_meta").decode((String, String).self) {
            meta[key] = value
        }
        let loading = meta["state"] == "loading"
        guard sinceLast || loading else {
            throw ExportError(
                .outputExists,
                "\(target.masked) already holds an export; pass --since-last to add what is new to it, or export into an empty database")
        }
        try ExportSummary.checkMatches(meta, identity: identity, personalData: source.includePersonalData, path: target.masked)
        if meta["schema_version"] != String(PostgresExportSchema.version) {
            guard let upgrade = PostgresExportSchema.upgrades[meta["schema_version"] ?? ""] else {
                throw ExportError(
                    .mismatch,
                    "\(target.masked) holds an export of schema version \(meta["schema_version"] ?? "?"); this version writes \(PostgresExportSchema.version): export into an empty database"
                )
            }
            for statement in upgrade.statements { try await execute(statement) }
            // The marks say what is still to be written, and commit with the upgrade in the first
            // slice: a rerun after a kill, which finds this version, writes it all the same.
            var marks = [("schema_version", String(PostgresExportSchema.version))]
            if upgrade.addsAllRows { marks.append(("rows_sequence", "0")) }
            if upgrade.rewritesUsers { marks.append(("users_sequence", "0")) }
            try await setMeta(marks)
            for (key, value) in marks { meta[key] = value }
        }
        let last = try ExportSummary.mark("last_sequence", in: meta, path: target.masked) ?? 0
        let users = try ExportSummary.mark("users_sequence", in: meta, path: target.masked) ?? last
        let rows = try ExportSummary.mark("rows_sequence", in: meta, path: target.masked) ?? users
        return Start(lastSequence: last, usersSequence: users, rowsSequence: rows, loading: loading, meta: meta)
    }

    /// The last transaction's part: the kept rows, the users, the rewrites, a first load's
    /// indexes, the views, the facts and the row in `exports`. The reader's end is awaited only
    /// once every batch is taken: it may be waiting to hand over more.
    private func finish(
        _ batches: BatchStream, start: Start, reader: Task<ExportSource.End, any Error>, source: ExportSource, identity: LedgerCreated
    ) async throws -> ExportSummary {
        let keptRows = try await copy(batches, .rows, into: "event_rows", columns: Self.rowColumns) { "kept row \($0) of this run" }
        let users = try await writeUsers(batches, direct: start.loading)
        if try await batches.peek()?.kind == .rewrites {
            try await execute("CREATE TEMP TABLE event_rewrites (seq bigint PRIMARY KEY, event_json jsonb NOT NULL, exact_text text) ON COMMIT DROP")
            _ = try await copy(batches, .rewrites, into: "event_rewrites", columns: ["seq", "event_json", "exact_text"]) {
                "rewritten event, row \($0)"
            }
            try await execute(
                "UPDATE events AS e SET event_json = r.event_json, exact_text = r.exact_text FROM event_rewrites AS r WHERE e.seq = r.seq")
        }
        if try await batches.peek()?.kind == .rowRewrites {
            try await execute(
                "CREATE TEMP TABLE row_rewrites (seq bigint, row_index integer, line text NOT NULL, exact_text text, PRIMARY KEY (seq, row_index)) ON COMMIT DROP"
            )
            _ = try await copy(batches, .rowRewrites, into: "row_rewrites", columns: Self.rowColumns) { "rewritten kept row, row \($0)" }
            try await execute(
                "UPDATE event_rows AS e SET line = r.line, exact_text = r.exact_text FROM row_rewrites AS r WHERE e.seq = r.seq AND e.row_index = r.row_index"
            )
        }
        if let unexpected = try await batches.peek() {
            throw ExportError(.internal, "\(unexpected.kind) rows arrived out of order")
        }
        let end = try await reader.value
        if start.loading {
            for statement in PostgresExportSchema.indexStatements { try await execute(statement) }
        }
        if start.meta["views_version"] != String(PostgresExportSchema.viewsVersion) {
            for statement in PostgresExportSchema.viewStatements { try await execute(statement) }
        }
        let through = max(end.last, start.lastSequence)
        let events = Int(through - start.lastSequence)
        try await setMeta(
            facts(identity: identity, personalData: source.includePersonalData) + [
                ("views_version", String(PostgresExportSchema.viewsVersion)), ("last_sequence", String(through)), ("users_sequence", String(through)),
                ("rows_sequence", String(through)),
                ("window_accepted_at", end.window?.acceptedAt.rfc3339), ("window_deadline", end.window?.deadline.rfc3339), ("state", nil),
            ])
        let summary = ExportSummary(
            format: .postgres, path: target.masked, fromSequence: start.lastSequence + 1, toSequence: through,
            eventsAdded: events, rowsAdded: keptRows, usersWritten: users)
        try await query(
            """
            INSERT INTO exports (exported_at, from_sequence, to_sequence, events_added, users_written)
            VALUES (now(), \(Int64(summary.fromSequence)), \(Int64(summary.toSequence)), \(Int64(summary.eventsAdded)), \(Int64(summary.usersWritten)))
            """)
        return summary
    }

    /// The facts every transaction that creates or finishes an export writes.
    private func facts(identity: LedgerCreated, personalData: Bool) -> [(String, String?)] {
        [
            ("ledger_id", identity.ledgerID), ("team_id", identity.teamID), ("role", identity.role.rawValue),
            ("schema_version", String(PostgresExportSchema.version)), ("personal_data", personalData ? "1" : "0"),
        ]
    }

    /// Sets (or, for nil, deletes) keys of `export_meta`.
    private func setMeta(_ facts: [(String, String?)]) async throws {
        for (key, value) in facts {
            if let value {
                try await query(
                    "INSERT INTO export_meta (key, value) VALUES (\(key), \(value)) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value")
            } else {
                try await query("DELETE FROM export_meta WHERE key = \(key)")
            }
        }
    }

    /// Reads the ledger on a thread of its own (the read transaction's closure is
    /// synchronous) and hands the rows over in COPY text batches of about 1 MiB.
    private static func read(
        _ source: ExportSource, after: UInt64, rowsAfter: UInt64, usersAfter: UInt64, slice: Int, into handoff: BoundedRelay<CopyBatch>
    ) async throws -> ExportSource.End {
        try await OffPool.run {
            let result = Result {
                let limit = 1 << 20
                var events = CopyTextRows(capacity: limit + 4096)
                var keptRows = CopyTextRows(capacity: 64 << 10)
                var users = CopyTextRows(capacity: 64 << 10)
                var rewrites = CopyTextRows(capacity: 64 << 10)
                var rowRewrites = CopyTextRows(capacity: 64 << 10)
                var read = 0
                func flush(_ rows: inout CopyTextRows, as kind: CopyBatch.Kind) throws {
                    guard rows.rows > 0 else { return }
                    let (buffer, count) = rows.take()
                    try handoff.put(CopyBatch(kind: kind, rows: buffer, count: count))
                }
                let end = try source.read(
                    after: after, rowsAfter: rowsAfter, users: .changedAfter(usersAfter),
                    to: .init(
                        event: { event in
                            events.append(ExportAnswers.events.cells(event), columns: ExportAnswers.events.names, jsonColumn: eventJSONColumn)
                            read += 1
                            // A batch never straddles two slices, so each transaction ends on one.
                            if events.buffer.readableBytes >= limit || read % slice == 0 { try flush(&events, as: .events) }
                        },
                        row: { row in
                            try flush(&events, as: .events)
                            keptRows.append(ExportAnswers.eventRows.cells(row), columns: ExportAnswers.eventRows.names)
                            if keptRows.buffer.readableBytes >= limit { try flush(&keptRows, as: .rows) }
                        },
                        user: { user in
                            try flush(&events, as: .events)
                            try flush(&keptRows, as: .rows)
                            users.append(ExportAnswers.users.cells(user), columns: ExportAnswers.users.names)
                            if users.buffer.readableBytes >= limit { try flush(&users, as: .users) }
                        },
                        rewrite: { rewrite in
                            try flush(&users, as: .users)
                            switch rewrite {
                            case .event(let sequence, let json):
                                rewrites.append(Int64(sequence), eventJSON: json)
                                if rewrites.buffer.readableBytes >= limit { try flush(&rewrites, as: .rewrites) }
                            case .row(let row):
                                // The source hands every event's rewrite before any row's.
                                try flush(&rewrites, as: .rewrites)
                                rowRewrites.append(ExportAnswers.eventRows.cells(row), columns: ExportAnswers.eventRows.names)
                                if rowRewrites.buffer.readableBytes >= limit { try flush(&rowRewrites, as: .rowRewrites) }
                            }
                        }))
                try flush(&events, as: .events)
                try flush(&keptRows, as: .rows)
                try flush(&users, as: .users)
                try flush(&rewrites, as: .rewrites)
                try flush(&rowRewrites, as: .rowRewrites)
                return end
            }
            handoff.finish(result.map { _ in () })
            return try result.get()
        }
    }

    /// The columns of `events`, `users` and `event_rows` as the export writes them: the SQLite export's,
    /// then `exact_text` (``CopyTextRows``).
    static let eventColumns = ExportAnswers.events.names + ["exact_text"]
    static let userColumns = ExportAnswers.users.names + ["exact_text"]
    static let rowColumns = ExportAnswers.eventRows.names + ["exact_text"]
    private static let eventJSONColumn = ExportAnswers.events.names.firstIndex(of: "event_json")

    /// COPYs event batches at the head of `batches` into `events` until `slice` events (or
    /// the events) are done; returns how many. The first is the event after `after`.
    private func copyEvents(_ batches: BatchStream, after: UInt64, upTo slice: Int) async throws -> Int {
        try await copy(batches, .events, into: "events", columns: Self.eventColumns, upTo: slice) { "sequence \(after + UInt64($0))" }
    }

    /// Writes the users at the head of `batches`: by COPY straight into `users` when `direct`
    /// (a first export: the table is empty), else into a staging table merged in, and users
    /// merged away deleted. Returns how many.
    private func writeUsers(_ batches: BatchStream, direct: Bool) async throws -> Int {
        let userColumns = Self.userColumns
        if direct {
            return try await copy(batches, .users, into: "users", columns: userColumns) { "user row \($0) of this run" }
        }
        guard try await batches.peek()?.kind == .users else { return 0 }
        try await execute("CREATE TEMP TABLE users_incoming (LIKE users) ON COMMIT DROP")
        let users = try await copy(batches, .users, into: "users_incoming", columns: userColumns) { "user row \($0) of this run" }
        let sameIdentifier = IdentifierKind.userKinds.map { "u.\($0.rawValue) = i.\($0.rawValue)" }.joined(separator: " OR ")
        try await execute("DELETE FROM users AS u USING users_incoming AS i WHERE u.user_key <> i.user_key AND (\(sameIdentifier))")
        let updates = userColumns.dropFirst().map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
        let list = userColumns.joined(separator: ", ")
        try await execute("INSERT INTO users (\(list)) SELECT \(list) FROM users_incoming ON CONFLICT (user_key) DO UPDATE SET \(updates)")
        return users
    }

    /// COPYs the run of `kind` batches at the head of `batches` into `table`, stopping after
    /// the batch that reaches `limit` rows; returns the rows. A row PostgreSQL refuses is named
    /// by `row` (given its 1-based line in this COPY) in the error.
    private func copy(
        _ batches: BatchStream, _ kind: CopyBatch.Kind, into table: String, columns: [String], upTo limit: Int = .max,
        row: @escaping (Int) -> String
    ) async throws -> Int {
        guard try await batches.peek()?.kind == kind else { return 0 }
        var rows = 0
        do {
            try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                while rows < limit, let batch = try await batches.peek(), batch.kind == kind {
                    try await writer.write(batch.rows)
                    rows += batch.count
                    _ = try await batches.take()
                }
            }
        } catch {
            throw PostgresFailure.exportError(error, doing: "COPY into", target: target, copying: (table, row))
        }
        return rows
    }

    private func execute(_ sql: String) async throws {
        try await query(PostgresQuery(unsafeSQL: sql))
    }

    private func scalar<T: PostgresDecodable & Sendable>(_ sql: String, as type: T.Type) async throws -> T? {
        var value: T?
        for try await (decoded) in try await query(PostgresQuery(unsafeSQL: sql)).decode(T.self) { value = decoded }
        return value
    }

    /// Runs one statement on the connection (inside a run or the lock's loop, which
    /// ``ConnectionWatch`` ends should the connection close).
    @discardableResult
    private func query(_ query: PostgresQuery) async throws -> PostgresRowSequence {
        try await connection.query(query, logger: logger)
    }

}

/// Rows for one COPY, in PostgreSQL's text format.
struct CopyBatch: Sendable {
    enum Kind: Sendable { case events, rows, users, rewrites, rowRewrites }
    var kind: Kind
    var rows: ByteBuffer
    var count: Int
}

/// The batches of a handoff with one of lookahead, so a COPY can stop where the next kind starts.
actor BatchStream {
    private let handoff: BoundedRelay<CopyBatch>
    private var peeked: CopyBatch?
    private var done = false

    init(_ handoff: BoundedRelay<CopyBatch>) { self.handoff = handoff }

    /// The next batch without taking it; nil at the end.
    func peek() async throws -> CopyBatch? {
        if peeked == nil && !done {
            peeked = try await handoff.next()
            done = peeked == nil
        }
        return peeked
    }

    /// The next batch, taken.
    func take() async throws -> CopyBatch? {
        let batch = try await peek()
        peeked = nil
        return batch
    }
}
