import Foundation
import Ledger
import Logging
import NIOCore
import PostgresNIO

/// One connection to the export database, holding the exporters' advisory lock for as long
/// as it is open, through which export runs are made: each run one transaction that carries
/// its rows and the high-water mark (`export_meta.last_sequence`) together.
final class PostgresExportSession {
    /// The key of the session-level advisory lock every exporter takes.
    static let lockKey: Int64 = 7_285_430_110_250

    let target: PostgresTarget
    private let connection: PostgresConnection
    private let logger: Logger
    /// The last sequence this session exported, once it has run.
    private(set) var lastSequence: UInt64?

    private init(target: PostgresTarget, connection: PostgresConnection, logger: Logger) {
        self.target = target
        self.connection = connection
        self.logger = logger
    }

    /// Connects and takes the advisory lock, or throws ``ExportError/Code/busy`` when
    /// another exporter holds it.
    static func open(_ target: PostgresTarget, logger: Logger) async throws -> PostgresExportSession {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: try target.configuration(), id: 1, logger: logger)
        } catch let error as ExportError {
            throw error
        } catch {
            throw ExportError(.io, "cannot connect to \(target.masked): \(PostgresFailure.describe(error, target: target))")
        }
        let session = PostgresExportSession(target: target, connection: connection, logger: logger)
        do {
            let rows = try await connection.query("SELECT pg_try_advisory_lock(\(lockKey))", logger: logger)
            var locked = false
            for try await (value) in rows.decode(Bool.self) { locked = value }
            guard locked else {
                throw ExportError(.busy, "another exporter is writing into \(target.masked) (it holds advisory lock \(lockKey)); stop it, or wait for it to finish")
            }
        } catch {
            await session.close()
            throw session.failure(error, doing: "take the exporters' lock")
        }
        return session
    }

    /// Closes the connection, which releases the lock (and rolls back an open transaction).
    func close() async {
        try? await connection.close()
    }

    /// Exports what `source` has after what the database holds. Without `sinceLast`, the
    /// database must hold no export yet.
    func run(_ source: ExportSource, identity: LedgerCreated, sinceLast: Bool) async throws -> ExportSummary {
        do {
            try await execute("BEGIN")
            let summary = try await load(source, identity: identity, sinceLast: sinceLast)
            try await execute("COMMIT")
            lastSequence = summary.toSequence
            return summary
        } catch {
            try? await execute("ROLLBACK")
            throw failure(error, doing: "export")
        }
    }

    /// The ledger's rows after the database's high-water mark, written inside the open
    /// transaction, with the new mark and a row in `exports`.
    private func load(_ source: ExportSource, identity: LedgerCreated, sinceLast: Bool) async throws -> ExportSummary {
        let fresh = try await scalar("SELECT to_regclass('export_meta') IS NULL", as: Bool.self) ?? true
        var previous: UInt64 = 0
        var meta: [String: String] = [:]
        if fresh {
            for statement in PostgresExportSchema.tableStatements { try await execute(statement) }
        } else {
            guard sinceLast else {
                throw ExportError(.outputExists, "\(target.masked) already holds an export; pass --since-last to add what is new to it, or export into an empty database")
            }
            for try await (key, value) in try await connection.query("SELECT key, value FROM export_meta", logger: logger).decode((String, String).self) {
                meta[key] = value
            }
            try ExportSummary.checkMatches(meta, identity: identity, personalData: source.includePersonalData, path: target.masked)
            guard meta["schema_version"] == String(PostgresExportSchema.version) else {
                throw ExportError(.mismatch, "\(target.masked) holds an export of schema version \(meta["schema_version"] ?? "?"); this version writes \(PostgresExportSchema.version): export into an empty database")
            }
            previous = UInt64(meta["last_sequence"] ?? "0") ?? 0
        }

        let handoff = BatchHandoff<CopyBatch>(capacity: 4)
        let reader = Task { [source, previous, handoff] in try await PostgresExportSession.read(source, after: previous, into: handoff) }
        let written: (events: Int, users: Int)
        do {
            written = try await write(BatchStream(handoff), fresh: fresh)
        } catch {
            handoff.abandon()
            _ = try? await reader.value
            throw error
        }
        let end = try await reader.value

        if fresh {
            for statement in PostgresExportSchema.indexStatements { try await execute(statement) }
        }
        if meta["views_version"] != String(PostgresExportSchema.viewsVersion) {
            for statement in PostgresExportSchema.viewStatements { try await execute(statement) }
        }
        let through = max(end.last, previous)
        var facts: [(String, String?)] = [
            ("ledger_id", identity.ledgerID), ("team_id", identity.teamID), ("role", identity.role.rawValue),
            ("schema_version", String(PostgresExportSchema.version)), ("views_version", String(PostgresExportSchema.viewsVersion)),
            ("personal_data", source.includePersonalData ? "1" : "0"), ("last_sequence", String(through)),
        ]
        facts += [("window_accepted_at", end.window?.acceptedAt.rfc3339), ("window_deadline", end.window?.deadline.rfc3339)]
        for (key, value) in facts {
            if let value {
                try await connection.query("INSERT INTO export_meta (key, value) VALUES (\(key), \(value)) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", logger: logger)
            } else {
                try await connection.query("DELETE FROM export_meta WHERE key = \(key)", logger: logger)
            }
        }
        let summary = ExportSummary(format: .postgres, path: target.masked, fromSequence: previous + 1, toSequence: through,
                                    eventsAdded: written.events, usersWritten: written.users)
        try await connection.query("""
            INSERT INTO exports (exported_at, from_sequence, to_sequence, events_added, users_written)
            VALUES (now(), \(Int64(summary.fromSequence)), \(Int64(summary.toSequence)), \(Int64(summary.eventsAdded)), \(Int64(summary.usersWritten)))
            """, logger: logger)
        return summary
    }

    /// Reads the ledger on a thread of its own (the read transaction's closure is
    /// synchronous) and hands the rows over in COPY text batches of about 1 MiB.
    private static func read(_ source: ExportSource, after: UInt64, into handoff: BatchHandoff<CopyBatch>) async throws -> ExportSource.End {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                let result = Result {
                    let limit = 1 << 20
                    var events = CopyTextRows(capacity: limit + 4096), users = CopyTextRows(capacity: 64 << 10), rewrites = CopyTextRows(capacity: 64 << 10)
                    func flush(_ rows: inout CopyTextRows, as kind: CopyBatch.Kind) throws {
                        guard rows.rows > 0 else { return }
                        let (buffer, count) = rows.take()
                        try handoff.put(CopyBatch(kind: kind, rows: buffer, count: count))
                    }
                    let end = try source.read(after: after, users: .changedAfter(after), to: .init(event: { event in
                        events.append(event.cells)
                        if events.buffer.readableBytes >= limit { try flush(&events, as: .events) }
                    }, user: { cells in
                        try flush(&events, as: .events)
                        users.append(cells)
                        if users.buffer.readableBytes >= limit { try flush(&users, as: .users) }
                    }, rewrite: { sequence, json in
                        try flush(&users, as: .users)
                        rewrites.append(Int64(sequence), json)
                        if rewrites.buffer.readableBytes >= limit { try flush(&rewrites, as: .rewrites) }
                    }))
                    try flush(&events, as: .events)
                    try flush(&users, as: .users)
                    try flush(&rewrites, as: .rewrites)
                    return end
                }
                handoff.finish(result.map { _ in () })
                continuation.resume(with: result)
            }
        }
    }

    /// Writes the batches: events by COPY; users by COPY, straight into `users` on a first
    /// export, else into a staging table merged in (and users merged away deleted); rewritten
    /// events of erased users by COPY into a staging table applied as one UPDATE.
    private func write(_ batches: BatchStream, fresh: Bool) async throws -> (events: Int, users: Int) {
        let events = try await copy(batches, .events, into: "events", columns: ExportedEvent.columns)
        var users = 0
        let userColumns = ExportSource.userColumns
        if fresh {
            users = try await copy(batches, .users, into: "users", columns: userColumns)
        } else if try await batches.peek()?.kind == .users {
            try await execute("CREATE TEMP TABLE users_incoming (LIKE users) ON COMMIT DROP")
            users = try await copy(batches, .users, into: "users_incoming", columns: userColumns)
            let sameIdentifier = IdentifierKind.userKinds.map { "u.\($0.rawValue) = i.\($0.rawValue)" }.joined(separator: " OR ")
            try await execute("DELETE FROM users AS u USING users_incoming AS i WHERE u.user_key <> i.user_key AND (\(sameIdentifier))")
            let updates = userColumns.dropFirst().map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
            let list = userColumns.joined(separator: ", ")
            try await execute("INSERT INTO users (\(list)) SELECT \(list) FROM users_incoming ON CONFLICT (user_key) DO UPDATE SET \(updates)")
        }
        if try await batches.peek()?.kind == .rewrites {
            try await execute("CREATE TEMP TABLE event_rewrites (seq bigint PRIMARY KEY, event_json jsonb NOT NULL) ON COMMIT DROP")
            _ = try await copy(batches, .rewrites, into: "event_rewrites", columns: ["seq", "event_json"])
            try await execute("UPDATE events AS e SET event_json = r.event_json FROM event_rewrites AS r WHERE e.seq = r.seq")
        }
        if let unexpected = try await batches.peek() {
            throw ExportError(.io, "internal: \(unexpected.kind) rows arrived out of order")
        }
        return (events, users)
    }

    /// COPYs the run of `kind` batches at the head of `batches` into `table`; returns the rows.
    private func copy(_ batches: BatchStream, _ kind: CopyBatch.Kind, into table: String, columns: [String]) async throws -> Int {
        guard try await batches.peek()?.kind == kind else { return 0 }
        var rows = 0
        try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
            while let batch = try await batches.peek(), batch.kind == kind {
                try await writer.write(batch.rows)
                rows += batch.count
                _ = try await batches.take()
            }
        }
        return rows
    }

    private func execute(_ sql: String) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
    }

    private func scalar<T: PostgresDecodable & Sendable>(_ sql: String, as type: T.Type) async throws -> T? {
        var value: T?
        for try await (decoded) in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(T.self) { value = decoded }
        return value
    }

    /// `error` as an ``ExportError``, naming the target only masked.
    private func failure(_ error: any Error, doing what: String) -> ExportError {
        if let error = error as? ExportError { return error }
        return ExportError(.io, "cannot \(what) into \(target.masked): \(PostgresFailure.describe(error, target: target))")
    }
}

/// Rows for one COPY, in PostgreSQL's text format.
struct CopyBatch: Sendable {
    enum Kind: Sendable { case events, users, rewrites }
    var kind: Kind
    var rows: ByteBuffer
    var count: Int
}

/// The batches of a handoff with one of lookahead, so a COPY can stop where the next kind starts.
actor BatchStream {
    private let handoff: BatchHandoff<CopyBatch>
    private var peeked: CopyBatch?
    private var done = false

    init(_ handoff: BatchHandoff<CopyBatch>) { self.handoff = handoff }

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
