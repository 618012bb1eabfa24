import Basics
import Foundation
import GRDB
import Ledger
import Projections
import Relays

/// Writes an export into one SQLite file through GRDB, all of a run in one transaction: a
/// crash leaves the file as the previous run left it, and the next run starts from there.
/// Text is stored exactly as the ledger holds it (SQLite's text takes any character, NUL
/// included); a new file that will hold personal data is created mode 0600.
struct SQLiteExport {
    let path: String
    let source: ExportSource
    let identity: LedgerCreated

    func run(sinceLast: Bool) throws -> ExportSummary {
        let exists = FileManager.default.fileExists(atPath: path)
        if exists && !sinceLast {
            throw ExportError(.outputExists, "\(path) exists; pass --since-last to add what is new to it, or choose a new path")
        }
        if !exists, source.includePersonalData, !FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) {
            throw ExportError(.io, "cannot create \(path)")
        }
        let queue: DatabaseQueue
        do { queue = try DatabaseQueue(path: path) } catch {
            throw ExportError(.io, "cannot open \(path) as SQLite", underlying: error)
        }
        return try queue.write { db in
            var previous: UInt64 = 0
            var usersAfter: UInt64 = 0
            var rowsAfter: UInt64 = 0
            let fresh = try !db.tableExists("export_meta")
            if !fresh {
                let meta = try Dictionary(
                    uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT key, value FROM export_meta").map {
                        ($0["key"] as String, $0["value"] as String)
                    })
                try ExportSummary.checkMatches(meta, identity: identity, personalData: source.includePersonalData, path: path)
                previous = try ExportSummary.mark("last_sequence", in: meta, path: path) ?? 0
                usersAfter = previous
                rowsAfter = previous
                if meta["schema_version"] != String(ExportSchema.version) {
                    guard let upgrade = ExportSchema.upgrades[meta["schema_version"] ?? ""] else {
                        throw ExportError(
                            .mismatch,
                            "\(path) holds an export of schema version \(meta["schema_version"] ?? "?"); this version writes \(ExportSchema.version): export to a new file"
                        )
                    }
                    for statement in upgrade.statements { try db.execute(sql: statement) }
                    if upgrade.rewritesUsers { usersAfter = 0 }
                    if upgrade.addsAllRows { rowsAfter = 0 }
                }
            } else {
                try db.execute(sql: ExportSchema.tableStatements)
            }
            let eventColumns = ExportAnswers.events.names
            let userColumns = ExportAnswers.users.names
            let rowColumns = ExportAnswers.eventRows.names
            var insertEvent = SQLiteRowInserter(
                try db.makeStatement(sql: "INSERT INTO events (\(eventColumns.joined(separator: ", "))) VALUES (\(placeholders(eventColumns.count)))")
            )
            var upsertUser = SQLiteRowInserter(
                try db.makeStatement(
                    sql: "INSERT OR REPLACE INTO users (\(userColumns.joined(separator: ", "))) VALUES (\(placeholders(userColumns.count)))"))
            var insertRow = SQLiteRowInserter(
                try db.makeStatement(sql: "INSERT INTO event_rows (\(rowColumns.joined(separator: ", "))) VALUES (\(placeholders(rowColumns.count)))")
            )
            let rewriteEvent = try db.makeStatement(sql: "UPDATE events SET event_json = ? WHERE seq = ?")
            let rewriteRow = try db.makeStatement(sql: "UPDATE event_rows SET line = ? WHERE seq = ? AND row_index = ?")
            // Rows are inserted on a second thread, in order, while this one reads the next; the
            // connection is used by one thread at a time: this one again once `finish` returns.
            let rows = BackgroundBatchWriter<Item> { batch in
                for item in batch {
                    switch item {
                    case .event(let event): try insertEvent.insert(ExportAnswers.events.cells(event))
                    case .row(let row): try insertRow.insert(ExportAnswers.eventRows.cells(row))
                    case .user(let user): try upsertUser.insert(ExportAnswers.users.cells(user))
                    }
                }
            }
            var events = 0
            var keptRows = 0
            var users = 0
            let last = try source.read(
                after: previous, rowsAfter: rowsAfter, users: .changedAfter(usersAfter),
                to: .init(
                    event: { event in
                        try rows.append(.event(event))
                        events += 1
                    },
                    row: { row in
                        try rows.append(.row(row))
                        keptRows += 1
                    },
                    user: { user in
                        try rows.append(.user(user))
                        users += 1
                    },
                    rewrite: { rewrite in
                        try rows.finish()
                        switch rewrite {
                        case .event(let sequence, let json):
                            try rewriteEvent.execute(arguments: [String(decoding: json, as: UTF8.self), Int64(sequence)])
                        case .row(let row):
                            try rewriteRow.execute(arguments: [String(decoding: row.line, as: UTF8.self), Int64(row.sequence), row.index])
                        }
                    })
            ).last
            try rows.finish()
            if fresh { try db.execute(sql: ExportSchema.indexStatements) }
            let summary = ExportSummary(
                format: .sqlite, path: path, fromSequence: previous + 1, toSequence: max(last, previous), eventsAdded: events, rowsAdded: keptRows,
                usersWritten: users)
            let meta: [(String, String)] = [
                ("ledger_id", identity.ledgerID), ("team_id", identity.teamID), ("role", identity.role.rawValue),
                ("schema_version", String(ExportSchema.version)), ("personal_data", source.includePersonalData ? "1" : "0"),
                ("last_sequence", String(summary.toSequence)),
            ]
            for (key, value) in meta {
                try db.execute(sql: "INSERT OR REPLACE INTO export_meta (key, value) VALUES (?, ?)", arguments: [key, value])
            }
            try db.execute(
                sql: "INSERT INTO exports (exported_at, from_sequence, to_sequence, events_added, users_written) VALUES (?, ?, ?, ?, ?)",
                arguments: [Timestamp.now().rfc3339, Int64(summary.fromSequence), Int64(summary.toSequence), events, users])
            return summary
        }
    }

    /// One row for the inserting thread.
    private enum Item {
        case event(ExportedEvent)
        case row(ExportedRow)
        case user(UserRow)
    }

    private func placeholders(_ n: Int) -> String { Array(repeating: "?", count: n).joined(separator: ", ") }
}
