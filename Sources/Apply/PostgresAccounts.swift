import Foundation
import Ledger
import Logging
import PostgresAccess
import PostgresNIO

/// The app's accounts table in PostgreSQL, over one connection to a ``PostgresTarget`` (the
/// same URL, password sources and TLS modes as `export --format postgres`). A plan reads in a
/// read-only transaction; each batch's writes and its marker commit in one transaction.
public final class PostgresAccounts: AccountsTable, Sendable {
    public let mapping: ApplyMapping
    public var targetKind: ApplyStarted.TargetKind { .postgres }
    public var targetName: String { Self.withoutUser(target.masked) }

    /// `url` without the user and password before its host.
    static func withoutUser(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else { return url }
        let rest = url[scheme.upperBound...]
        guard !rest[..<at].contains("/") else { return url }
        return String(url[..<scheme.upperBound]) + String(rest[rest.index(after: at)...])
    }
    private let target: PostgresTarget
    private let connection: PostgresConnection
    private let logger: Logger
    /// The key column's type as the catalogue names it (`bigint`, `uuid`, `text`, ...): keys are
    /// bound as text and cast to it, so the column's index finds them.
    private let keyType: String
    /// Each mapped column's type, as the catalogue names it: values are bound as text and cast to it.
    private let types: PerColumn<String>

    private init(
        mapping: ApplyMapping, target: PostgresTarget, connection: PostgresConnection, keyType: String, types: PerColumn<String>, logger: Logger
    ) {
        self.mapping = mapping
        self.target = target
        self.connection = connection
        self.keyType = keyType
        self.types = types
        self.logger = logger
    }

    /// Connects to `target`; a plan's session is read-only (`default_transaction_read_only`).
    public static func connect(_ target: PostgresTarget, mapping: ApplyMapping, writable: Bool, logger: Logger) async throws -> PostgresAccounts {
        let connection: PostgresConnection
        do { connection = try await PostgresConnection.connect(configuration: try target.configuration(), id: 1, logger: logger) } catch {
            throw ApplyError(.target, "cannot connect to \(target.masked): \(PostgresFailure.describe(error, target: target))")
        }
        do {
            if !writable {
                _ = try await query("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY", [], on: connection, target: target, logger: logger)
            }
            let keyType = try await columnType(mapping.keyColumn, of: mapping, on: connection, target: target, logger: logger)
            var types = PerColumn<String>()
            for (value, column) in mapping.mapped {
                types[value] = try await columnType(column, of: mapping, on: connection, target: target, logger: logger)
            }
            if let type = types.emailForwarding, type != "boolean" {
                throw ApplyError(
                    .usage,
                    "\(target.masked): the column \(mapping.columns.emailForwarding!) is \(type): --set email_forwarding=COLUMN takes a boolean column in PostgreSQL"
                )
            }
            return PostgresAccounts(mapping: mapping, target: target, connection: connection, keyType: keyType, types: types, logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Closes the connection (an open transaction is rolled back).
    public func close() async { try? await connection.close() }

    public func currentValues(forKeys keys: [String]) async throws -> [String: [String?]] {
        let m = mapping
        var found: [String: [String?]] = [:]
        let count = m.mapped.count
        let sql =
            "SELECT \(m.keyColumn.quoted)::text, \(m.mapped.map { "\($0.column.quoted)::text" }.joined(separator: ", ")) FROM \(m.table.quoted) "
            + "WHERE \(m.keyColumn.quoted) = ANY($1::\(keyType)[])\(m.andCondition)"
        for try await row in try await query(sql, [keys]) {
            let cells = row.makeRandomAccess()
            found[try cells[0].decode(String.self)] = try (1...count).map { try cells[$0].decode(String?.self) }
        }
        return found
    }

    public func holders(of values: [String], in column: ApplyColumn) async throws -> [String: [String]] {
        let m = mapping
        guard let name = m.columns[column] else { return [:] }
        var found: [String: [String]] = [:]
        let sql = "SELECT \(m.keyColumn.quoted)::text, \(name.quoted)::text FROM \(m.table.quoted) WHERE \(name.quoted)::text = ANY($1)"
        for try await (key, value) in try await query(sql, [values]).decode((String, String).self) { found[value, default: []].append(key) }
        return found
    }

    /// One statement a batch, each account's row updated once whatever columns change: the
    /// changes go in as arrays, one element an account and five arrays a mapped column (whether
    /// it changes, the old value, the new one, and whether each is NULL). A collision (in a column
    /// of unique values) is any other row holding the new value, or the batch's first change giving
    /// that value being to another account. Each column's compare-and-set is in the update itself
    /// (its `SET` takes the new value only where the row holds the old one, its `WHERE` only rows
    /// where some column does), so that a row the app changes meanwhile is checked as it is then;
    /// the statement answers, for each account, which columns hold their new value after it and
    /// which collided (the others were changed meanwhile). All of it and the marker commit in one
    /// transaction.
    public func write(_ changes: [AccountChange], marker: ApplyMarker) async throws -> [ApplyOutcome] {
        // The accounts in the order of their first change, and each change's place among them.
        var rows: [String: Int] = [:]
        var keys: [String] = []
        for change in changes where rows[change.key] == nil {
            rows[change.key] = keys.count
            keys.append(change.key)
        }
        let columns = mapping.mapped.map(\.value)
        var binds: [(any PostgresEncodable & Sendable)?] = [keys]
        for column in columns {
            var cells = [AccountChange?](repeating: nil, count: keys.count)
            for change in changes where change.column == column { cells[rows[change.key]!] = change }
            binds += [
                cells.map { $0 != nil }, cells.map { $0?.old ?? "" }, cells.map { $0?.old == nil }, cells.map { $0?.new ?? "" },
                cells.map { $0?.new == nil },
            ]
        }
        try await run("BEGIN")
        do {
            try await run(Self.markerTable)
            var found: [Int: [(applied: Bool, taken: Bool)]] = [:]
            for try await row in try await query(updateStatement, binds) {
                let cells = row.makeRandomAccess()
                let index = try cells[0].decode(Int.self)
                found[index] = try columns.indices.map { (try cells[1 + 2 * $0].decode(Bool.self), try cells[2 + 2 * $0].decode(Bool.self)) }
            }
            let outcomes = changes.map { change -> ApplyOutcome in
                guard let cell = found[rows[change.key]! + 1]?[columns.firstIndex(of: change.column)!] else { return .changedMeanwhile }
                return cell.taken ? .collision : cell.applied ? .applied : .changedMeanwhile
            }
            let written = ApplyMarker(run: marker.run, batch: marker.batch, intentSHA256: marker.intentSHA256, outcomes: outcomes)
            _ = try await query(
                "INSERT INTO \(ApplyMarker.table) (run, batch, intent_sha256, applied, outcomes, committed_at) VALUES ($1, $2, $3, $4, $5, now())",
                [marker.run, marker.batch, marker.intentSHA256, outcomes.filter { $0 == .applied }.count, written.outcomeLetters])
            try await run("COMMIT")
            return outcomes
        } catch {
            try? await run("ROLLBACK")
            throw error
        }
    }

    /// The statement ``write(_:marker:)`` runs, made once for the mapping: its columns `c0`,
    /// `c1`, … in ``ApplyMapping/mapped`` order; each returned row an account's index (from 1)
    /// and, for each column, whether it holds its new value after the update and whether it collided.
    private var updateStatement: String {
        let m = mapping
        let t = m.table.quoted
        let key = "\(t).\(m.keyColumn.quoted)"
        var arrays: [String] = ["$1::text[]"]
        var names: [String] = ["handover_key"]
        var values: [String] = []
        var firsts: [String] = []
        var taken: [String] = []
        var sets: [String] = []
        var holds: [String] = []
        var returned: [String] = []
        for (n, (value, column)) in m.mapped.enumerated() {
            let c = "c\(n)"
            let p = 2 + 5 * n
            arrays += ["$\(p)::bool[]", "$\(p + 1)::text[]", "$\(p + 2)::bool[]", "$\(p + 3)::text[]", "$\(p + 4)::bool[]"]
            names += ["\(c)_has", "\(c)_old_text", "\(c)_old_null", "\(c)_new_text", "\(c)_new_null"]
            values += [
                "\(c)_has", "CASE WHEN \(c)_old_null THEN NULL ELSE \(c)_old_text END AS \(c)_old",
                "CASE WHEN \(c)_new_null THEN NULL ELSE \(c)_new_text END AS \(c)_new",
            ]
            firsts.append(
                "first_value(handover_key) OVER (PARTITION BY \(c)_has, \(c)_new_text, \(c)_new_null ORDER BY handover_i) AS \(c)_first")
            let current = "\(t).\(column.quoted)"
            taken.append(
                value.isUnique
                    ? "(i.\(c)_has AND i.\(c)_new IS NOT NULL AND (EXISTS (SELECT 1 FROM \(t) WHERE \(current)::text = i.\(c)_new "
                        + "AND \(key) IS DISTINCT FROM i.handover_key::\(keyType)) OR i.handover_key <> i.\(c)_first)) AS \(c)_taken"
                    : "false AS \(c)_taken")
            // The column takes its new value where the row holds, as the update finds it, the old one.
            let holdsOld = "(x.\(c)_has AND NOT x.\(c)_taken AND \(current)::text IS NOT DISTINCT FROM x.\(c)_old)"
            sets.append("\(column.quoted) = CASE WHEN \(holdsOld) THEN x.\(c)_new::\(types[value] ?? "text") ELSE \(current) END")
            holds.append(holdsOld)
            returned.append("x.\(c)_has AND NOT x.\(c)_taken AND \(current)::text IS NOT DISTINCT FROM x.\(c)_new, x.\(c)_taken")
        }
        return """
            WITH handover_input AS (
                SELECT handover_i, handover_key, \(values.joined(separator: ", ")), \(firsts.joined(separator: ", "))
                FROM unnest(\(arrays.joined(separator: ", "))) WITH ORDINALITY AS handover_u(\(names.joined(separator: ", ")), handover_i)
            ), handover_target AS (
                SELECT i.*, \(taken.joined(separator: ", ")) FROM handover_input i
            ), handover_written AS (
                UPDATE \(t) SET \(sets.joined(separator: ", ")) FROM handover_target x
                WHERE \(key) = x.handover_key::\(keyType)\(m.andCondition) AND (\(holds.joined(separator: " OR ")))
                RETURNING x.handover_i, \(returned.joined(separator: ", "))
            )
            SELECT * FROM handover_written
            UNION ALL SELECT x.handover_i, \(m.mapped.indices.map { "false, x.c\($0)_taken" }.joined(separator: ", ")) FROM handover_target x
            WHERE (\(m.mapped.indices.map { "x.c\($0)_taken" }.joined(separator: " OR "))) AND x.handover_i NOT IN (SELECT handover_i FROM handover_written)
            """
    }

    public func flagText(_ forwarding: Bool) -> String { forwarding ? "true" : "false" }

    public func committedBatches(of run: String) async throws -> [ApplyMarker] {
        var exists = false
        for try await found in try await query("SELECT to_regclass($1) IS NOT NULL", [ApplyMarker.table]).decode(Bool.self) { exists = found }
        guard exists else { return [] }
        var markers: [ApplyMarker] = []
        let sql = "SELECT batch, intent_sha256, outcomes FROM \(ApplyMarker.table) WHERE run = $1 ORDER BY batch"
        for try await (batch, digest, letters) in try await query(sql, [run]).decode((Int, String, String).self) {
            markers.append(try ApplyMarker(run: run, batch: batch, intentSHA256: digest, outcomeLetters: letters))
        }
        return markers
    }

    /// The type of the mapped table's `column`, as `format_type` names it; throws when the
    /// table or the column does not exist.
    private static func columnType(
        _ column: SQLIdentifier, of mapping: ApplyMapping, on connection: PostgresConnection, target: PostgresTarget,
        logger: Logger
    ) async throws -> String {
        let sql =
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2 AND attnum > 0 AND NOT attisdropped"
        for try await type in try await query(sql, [mapping.table.quoted, column.name], on: connection, target: target, logger: logger).decode(
            String.self)
        { return type }
        throw ApplyError(.usage, "\(target.masked) has no column \(column) in a table \(mapping.table) (names are matched exactly, case included)")
    }

    /// Handover's own table in the app's database.
    static let markerTable = ApplyMarker.createTable(timeType: "timestamptz")

    private func run(_ sql: String) async throws {
        _ = try await query(sql, [])
    }

    /// Runs `sql` with `values` bound as `$1`, `$2`, … (text, or a text array).
    private func query(_ sql: String, _ values: [(any PostgresEncodable & Sendable)?]) async throws -> PostgresRowSequence {
        try await Self.query(sql, values, on: connection, target: target, logger: logger)
    }

    private static func query(
        _ sql: String, _ values: [(any PostgresEncodable & Sendable)?], on connection: PostgresConnection, target: PostgresTarget,
        logger: Logger
    ) async throws -> PostgresRowSequence {
        var bindings = PostgresBindings()
        do {
            for value in values {
                if let value { try bindings.append(value) } else { bindings.appendNull() }
            }
            return try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
        } catch {
            throw ApplyError(.target, "\(target.masked): \(PostgresFailure.describe(error, target: target))")
        }
    }
}
