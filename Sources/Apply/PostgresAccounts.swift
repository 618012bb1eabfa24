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

    /// One statement a mapped column of a batch: the column's changes go in as arrays, a
    /// collision (a column of unique values) is any other row holding the new value (or the
    /// batch's first change giving that value being to another account), and the update's
    /// compare-and-set is its WHERE; it answers which changes were applied and which collided
    /// (the others were changed meanwhile). All of a batch's statements and its marker commit in
    /// one transaction.
    public func write(_ changes: [AccountChange], marker: ApplyMarker) async throws -> [ApplyOutcome] {
        try await run("BEGIN")
        do {
            try await run(Self.markerTable)
            var outcomes = [ApplyOutcome](repeating: .changedMeanwhile, count: changes.count)
            for (value, column) in mapping.mapped {
                let indices = changes.indices.filter { changes[$0].column == value }
                guard !indices.isEmpty, let type = types[value] else { continue }
                let some = indices.map { changes[$0] }
                let binds: [(any PostgresEncodable & Sendable)?] = [
                    some.map(\.key), some.map { $0.old ?? "" }, some.map { $0.old == nil }, some.map { $0.new ?? "" }, some.map { $0.new == nil },
                ]
                for try await (index, letter) in try await query(updateStatement(column, type: type, unique: value.isUnique), binds).decode(
                    (Int, String).self) where (1...some.count).contains(index)
                {
                    outcomes[indices[index - 1]] = letter.first.flatMap(ApplyMarker.outcome) ?? .changedMeanwhile
                }
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

    /// The statement writing one column's changes (``write(_:marker:)``), the column of type `type`.
    private func updateStatement(_ column: SQLIdentifier, type: String, unique: Bool) -> String {
        let m = mapping
        let t = m.table.quoted
        let key = "\(t).\(m.keyColumn.quoted)"
        let value = "\(t).\(column.quoted)"
        let taken =
            unique
            ? """
            SELECT i.handover_i FROM handover_input i
                WHERE i.handover_new IS NOT NULL AND (
                    EXISTS (SELECT 1 FROM \(t) WHERE \(value)::text = i.handover_new AND \(key) IS DISTINCT FROM i.handover_key::\(keyType))
                    OR i.handover_key <> i.handover_first_key)
            """ : "SELECT NULL::bigint AS handover_i WHERE false"
        return """
            WITH handover_input AS (
                SELECT handover_key, CASE WHEN handover_old_null THEN NULL ELSE handover_old END AS handover_old,
                       CASE WHEN handover_new_null THEN NULL ELSE handover_new END AS handover_new, handover_i,
                       first_value(handover_key) OVER (PARTITION BY handover_new, handover_new_null ORDER BY handover_i) AS handover_first_key
                FROM unnest($1::text[], $2::text[], $3::bool[], $4::text[], $5::bool[]) WITH ORDINALITY
                     AS handover_u(handover_key, handover_old, handover_old_null, handover_new, handover_new_null, handover_i)
            ), handover_taken AS (
                \(taken)
            ), handover_written AS (
                UPDATE \(t) SET \(column.quoted) = i.handover_new::\(type) FROM handover_input i
                WHERE \(key) = i.handover_key::\(keyType) AND \(value)::text IS NOT DISTINCT FROM i.handover_old\(m.andCondition)
                  AND i.handover_i NOT IN (SELECT handover_i FROM handover_taken)
                RETURNING i.handover_i
            )
            SELECT handover_i, '\(ApplyMarker.letters[.applied]!)' FROM handover_written
            UNION ALL SELECT handover_i, '\(ApplyMarker.letters[.collision]!)' FROM handover_taken
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
