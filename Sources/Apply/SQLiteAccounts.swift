import Foundation
import GRDB
import Ledger

/// The app's accounts table in a SQLite file, through GRDB. Opened read-only for a plan, so a
/// plan cannot change a byte of the app's database.
public final class SQLiteAccounts: AccountsTable, Sendable {
    public let mapping: ApplyMapping
    public var targetKind: ApplyStarted.TargetKind { .sqlite }
    public var targetName: String { path }
    private let queue: DatabaseQueue
    private let path: String

    /// Opens the SQLite file at `path` (which must exist), read-only unless `writable`.
    public init(path: String, mapping: ApplyMapping, writable: Bool) throws(ApplyError) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ApplyError(.target, "\(path) does not exist: --to takes the app's SQLite database")
        }
        var configuration = Configuration()
        configuration.readonly = !writable
        // The app writes to its database meanwhile: wait for its locks rather than fail.
        configuration.busyMode = .timeout(SQLiteAccounts.lockWait)
        do { queue = try DatabaseQueue(path: path, configuration: configuration) } catch {
            throw ApplyError(.target, "cannot open \(path) as SQLite: \(ErrorText.describing(error))")
        }
        self.mapping = mapping
        self.path = path
    }

    /// How long a read or a batch waits for a lock the app holds, seconds.
    static let lockWait: TimeInterval = 30

    /// Rows are asked for this many keys or values at a time (SQLite's default limit on bound
    /// parameters is 32,766).
    static let keysPerQuery = 500

    public func currentValues(forKeys keys: [String]) async throws -> [String: String?] {
        var found: [String: String?] = [:]
        for row in try await rows(whose: mapping.keyColumn, isIn: keys, condition: mapping.andCondition) {
            found[row.key] = .some(row.value)
        }
        return found
    }

    public func holders(of values: [String]) async throws -> [String: [String]] {
        var found: [String: [String]] = [:]
        for row in try await rows(whose: mapping.subColumn, isIn: values, condition: "") {
            if let value = row.value { found[value, default: []].append(row.key) }
        }
        return found
    }

    /// The key and value of each row whose `column` is one of `values`, asked for
    /// ``keysPerQuery`` values at a time, `condition` (SQL starting with " AND ", or empty)
    /// added to each query.
    private func rows(whose column: SQLIdentifier, isIn values: [String], condition: String) async throws -> [(key: String, value: String?)] {
        let m = mapping
        return try await read { db in
            var rows: [(key: String, value: String?)] = []
            for start in stride(from: 0, to: values.count, by: Self.keysPerQuery) {
                let some = Array(values[start..<min(start + Self.keysPerQuery, values.count)])
                let sql =
                    "SELECT CAST(\(m.keyColumn.quoted) AS TEXT) AS handover_key, \(m.subColumn.quoted) AS handover_value FROM \(m.table.quoted) "
                    + "WHERE \(column.quoted) IN (\(Self.placeholders(some.count)))\(condition)"
                for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(some)) {
                    rows.append((row["handover_key"], row["handover_value"]))
                }
            }
            return rows
        }
    }

    public func write(_ changes: [AccountChange], marker: ApplyMarker) async throws -> [ApplyOutcome] {
        let m = mapping
        do {
            return try await queue.write { db in
                try db.execute(sql: Self.markerTable)
                let taken = try db.makeStatement(
                    sql: "SELECT count(*) FROM \(m.table.quoted) WHERE \(m.subColumn.quoted) = ? AND \(m.keyColumn.quoted) IS NOT ?")
                let update = try db.makeStatement(
                    sql: "UPDATE \(m.table.quoted) SET \(m.subColumn.quoted) = ? "
                        + "WHERE \(m.keyColumn.quoted) = ? AND \(m.subColumn.quoted) IS ?\(m.andCondition)")
                var outcomes: [ApplyOutcome] = []
                for change in changes {
                    if change.new != nil, try Int.fetchOne(taken, arguments: [change.new, change.key]) ?? 0 > 0 {
                        outcomes.append(.collision)
                        continue
                    }
                    try update.execute(arguments: [change.new, change.key, change.old])
                    outcomes.append(db.changesCount == 1 ? .applied : .changedMeanwhile)
                }
                let written = ApplyMarker(run: marker.run, batch: marker.batch, intentSHA256: marker.intentSHA256, outcomes: outcomes)
                try db.execute(
                    sql: "INSERT INTO \(ApplyMarker.table) (run, batch, intent_sha256, applied, outcomes, committed_at) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [
                        marker.run, marker.batch, marker.intentSHA256, outcomes.filter { $0 == .applied }.count, written.outcomeLetters,
                        Timestamp.now().rfc3339,
                    ])
                return outcomes
            }
        } catch { throw ApplyError(.target, "\(path): the batch was not written (\(ErrorText.describing(error)))") }
    }

    public func committedBatches(of run: String) async throws -> [ApplyMarker] {
        let rows = try await read { db -> [(Int, String, String)] in
            guard try db.tableExists(ApplyMarker.table) else { return [] }
            return try Row.fetchAll(
                db, sql: "SELECT batch, intent_sha256, outcomes FROM \(ApplyMarker.table) WHERE run = ? ORDER BY batch", arguments: [run]
            ).map { row in
                (row["batch"], row["intent_sha256"], row["outcomes"])
            }
        }
        return try rows.map { try ApplyMarker(run: run, batch: $0.0, intentSHA256: $0.1, outcomeLetters: $0.2) }
    }

    /// Handover's own table in the app's database.
    static let markerTable = ApplyMarker.createTable(timeType: "text")

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do { return try await queue.read(body) } catch { throw ApplyError(.target, "\(path): \(ErrorText.describing(error))") }
    }

    private static func placeholders(_ count: Int) -> String { Array(repeating: "?", count: count).joined(separator: ", ") }
}
