import Basics
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

    public func currentValues(forKeys keys: [String]) async throws -> [String: [String?]] {
        let m = mapping
        let values = m.mapped.enumerated().map { "CAST(\($0.element.column.quoted) AS TEXT) AS handover_value_\($0.offset)" }
        let count = values.count
        return try await read { db in
            var found: [String: [String?]] = [:]
            for some in Self.slices(keys) {
                let sql =
                    "SELECT CAST(\(m.keyColumn.quoted) AS TEXT) AS handover_key, \(values.joined(separator: ", ")) FROM \(m.table.quoted) "
                    + "WHERE \(m.keyColumn.quoted) IN (\(Self.placeholders(some.count)))\(m.andCondition)"
                for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(some)) {
                    found[row["handover_key"]] = (0..<count).map { row["handover_value_\($0)"] }
                }
            }
            return found
        }
    }

    public func holders(of values: [String], in column: ApplyColumn) async throws -> [String: [String]] {
        let m = mapping
        guard let name = m.columns[column] else { return [:] }
        return try await read { db in
            var found: [String: [String]] = [:]
            for some in Self.slices(values) {
                // The column itself in the condition, so that its index finds the rows.
                let sql =
                    "SELECT CAST(\(m.keyColumn.quoted) AS TEXT) AS handover_key, CAST(\(name.quoted) AS TEXT) AS handover_value "
                    + "FROM \(m.table.quoted) WHERE \(name.quoted) IN (\(Self.placeholders(some.count)))"
                for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(some)) {
                    if let held: String = row["handover_value"] { found[held, default: []].append(row["handover_key"]) }
                }
            }
            return found
        }
    }

    /// `values` in slices of ``keysPerQuery``.
    private static func slices(_ values: [String]) -> [[String]] {
        stride(from: 0, to: values.count, by: keysPerQuery).map { Array(values[$0..<min($0 + keysPerQuery, values.count)]) }
    }

    public func write(_ changes: [AccountChange], marker: ApplyMarker) async throws -> [ApplyOutcome] {
        let m = mapping
        do {
            return try await queue.write { db in
                try db.execute(sql: Self.markerTable)
                var taken: [ApplyColumn: Statement] = [:]
                var update: [ApplyColumn: Statement] = [:]
                for (value, column) in m.mapped {
                    // Compare-and-set on the value as read (text), each column apart.
                    update[value] = try db.makeStatement(
                        sql: "UPDATE \(m.table.quoted) SET \(column.quoted) = ? "
                            + "WHERE \(m.keyColumn.quoted) = ? AND CAST(\(column.quoted) AS TEXT) IS ?\(m.andCondition)")
                    guard value.isUnique else { continue }
                    taken[value] = try db.makeStatement(
                        sql: "SELECT count(*) FROM \(m.table.quoted) WHERE \(column.quoted) = ? AND \(m.keyColumn.quoted) IS NOT ?")
                }
                var outcomes: [ApplyOutcome] = []
                for change in changes {
                    guard let statement = update[change.column] else {
                        throw ApplyError(.usage, "a change to \(change.column.rawValue), which this mapping does not set")
                    }
                    if let new = change.new, let taken = taken[change.column], try Int.fetchOne(taken, arguments: [new, change.key]) ?? 0 > 0 {
                        outcomes.append(.collision)
                        continue
                    }
                    try statement.execute(arguments: [Self.stored(change.new, change.column), change.key, change.old])
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
        } catch let error as ApplyError {
            throw error
        } catch { throw ApplyError(.target, "\(path): the batch was not written (\(ErrorText.describing(error)))") }
    }

    /// A value as it is bound for `column`: the forwarding flag as an integer (SQLite keeps
    /// Booleans as 1 and 0) when it is one, every other value as text.
    private static func stored(_ value: String?, _ column: ApplyColumn) -> (any DatabaseValueConvertible)? {
        guard let value else { return nil }
        if column == .emailForwarding, let flag = Int(value) { return flag }
        return value
    }

    public func flagText(_ forwarding: Bool) -> String { forwarding ? "1" : "0" }

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
