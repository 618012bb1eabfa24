import Basics
import Foundation
import Ledger

/// A database of its own, for one test, on the throwaway cluster `tools/test` starts
/// (`tools/pg-cluster`; its directory in `HANDOVER_TEST_POSTGRES_DIR`), read through `psql`.
public struct PostgresTestDatabase: Sendable {
    /// The cluster's directory, when one was started for the tests.
    public static var clusterDirectory: String? { ProcessInfo.processInfo.environment["HANDOVER_TEST_POSTGRES_DIR"] }
    /// Whether a cluster is there to test against.
    public static var isAvailable: Bool { clusterDirectory != nil }

    /// The URL of the new database, without the password.
    public let url: String
    /// The cluster's password, which the exporter finds in `PGPASSWORD`.
    public let password: String

    /// Creates a new, empty database on the cluster.
    public init() throws {
        guard let dir = Self.clusterDirectory else {
            throw PostgresTestError(message: "HANDOVER_TEST_POSTGRES_DIR is not set: run the tests through tools/test")
        }
        let base = try String(contentsOfFile: dir + "/url", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        password = try String(contentsOfFile: dir + "/password", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        let admin = base.replacingOccurrences(of: "/handover?", with: "/postgres?")
        _ = try Self.psql(admin, password: password, "CREATE DATABASE \(name)")
        url = base.replacingOccurrences(of: "/handover?", with: "/\(name)?")
    }

    /// The environment a `handover export` into this database runs with.
    public var environment: [String: String] { ["PGPASSWORD": password] }

    /// The single value `sql` selects, as text ("" for null).
    public func scalar(_ sql: String) throws -> String {
        try Self.psql(url, password: password, sql).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The rows `sql` selects, as JSON objects keyed by column name.
    public func rows(_ sql: String) throws -> [JSONValue] {
        let text = try scalar("SELECT coalesce(json_agg(t), '[]'::json) FROM (\(sql)) AS t")
        return try JSONValue.parse(Array(text.utf8)).arrayValue ?? []
    }

    /// Runs `sql` through `psql`, unaligned and without headers; throws with its error.
    @discardableResult
    public static func psql(_ url: String, password: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql]
        var environment = ProcessInfo.processInfo.environment
        environment["PGPASSWORD"] = password
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PostgresTestError(message: "psql failed (\(process.terminationStatus)): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A `psql` call that failed, or a cluster that is not there.
public struct PostgresTestError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// A lock a test holds in a session of its own, to hold a writer at a known point (its next
/// statement that needs the lock waits): `psql` with the transaction open until ``release()``.
public final class PostgresHeldLock {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    /// Opens a transaction on `database`, runs `statement` (a `LOCK TABLE ...`) in it, and
    /// returns once psql says it was taken (a deadline of two minutes only catches a hang).
    public init(_ database: PostgresTestDatabase, _ statement: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", database.url, "-X", "-At", "-v", "ON_ERROR_STOP=1"]
        process.environment = ProcessInfo.processInfo.environment.merging(database.environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data("BEGIN;\n\(statement);\nSELECT 'held';\n".utf8))
        var seen = Data()
        let started = Date()
        while !String(decoding: seen, as: UTF8.self).contains("held\n"), Date().timeIntervalSince(started) < 120 {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        guard String(decoding: seen, as: UTF8.self).contains("held\n") else {
            throw PostgresTestError(message: "the lock was not taken: \(statement)")
        }
    }

    /// Ends the transaction, letting the writers it held go on.
    public func release() {
        guard process.isRunning else { return }
        input.fileHandleForWriting.write(Data("ROLLBACK;\n".utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit { release() }
}
