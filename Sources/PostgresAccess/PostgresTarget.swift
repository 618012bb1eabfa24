import Basics
import Foundation
import NIOSSL
import PostgresNIO

/// A PostgreSQL database to export into, from a libpq-style URL
/// (`postgres://user[:password]@host[:port]/database?sslmode=require`).
///
/// The password comes from the URL, else `PGPASSWORD`, else the `~/.pgpass`-style file
/// (`PGPASSFILE` or `~/.pgpass`). It is never printed: ``masked`` stands for the URL in every
/// message, and ``redacting(_:)`` takes it out of any text that might quote it.
public struct PostgresTarget: Sendable {
    /// How the connection uses TLS, as libpq's `sslmode` says.
    public enum SSLMode: String, Sendable, CaseIterable {
        /// No TLS.
        case disable
        /// TLS when the server offers it, not verified (libpq's `allow` and `prefer`).
        case allow, prefer
        /// TLS always, the certificate not verified.
        case require
        /// TLS always, the certificate verified against `sslrootcert` (or the system's roots).
        case verifyCA = "verify-ca"
        /// As `verify-ca`, and the host name checked against the certificate.
        case verifyFull = "verify-full"
    }

    public var user: String
    public var host: String
    public var port: Int
    public var database: String
    public var sslMode: SSLMode
    /// A PEM file of trusted roots (`sslrootcert`).
    public var sslRootCertificate: String?
    /// Sent as `application_name`, so `pg_stat_activity` names the exporter.
    public var applicationName: String
    /// Seconds to wait for the connection (`connect_timeout`; libpq's default is none, this 10).
    public var connectTimeout: Int
    /// Where the password came from: "url", "PGPASSWORD", a password file's path, or nil.
    public private(set) var passwordSource: String?
    /// Never printed; see ``masked``.
    var password: String?

    /// Parses `url` and finds the password as libpq would; `environment` stands for the
    /// process environment (tests pass their own).
    public init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
            scheme == "postgres" || scheme == "postgresql"
        else {
            throw PostgresTargetError("--out for postgres takes a URL such as postgres://user@host:5432/database?sslmode=require")
        }
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        let known: Set<String> = ["sslmode", "sslrootcert", "application_name", "host", "port", "user", "dbname", "password", "connect_timeout"]
        if let unknown = query.keys.sorted().first(where: { !known.contains($0) }) {
            throw PostgresTargetError(
                "the postgres URL's parameter \(unknown) is not supported (supported: \(known.sorted().joined(separator: ", ")))")
        }
        guard let user = query["user"] ?? components.user ?? environment["PGUSER"], !user.isEmpty else {
            throw PostgresTargetError("the postgres URL names no user (postgres://USER@host/database)")
        }
        self.user = user
        var host = query["host"] ?? components.host ?? environment["PGHOST"] ?? "localhost"
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host.isEmpty ? "localhost" : host
        let portText = query["port"] ?? components.port.map(String.init) ?? environment["PGPORT"] ?? "5432"
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw PostgresTargetError("the postgres URL's port \(portText) is not a port number")
        }
        self.port = port
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.database = query["dbname"] ?? (path.isEmpty ? (environment["PGDATABASE"] ?? user) : path)
        let mode = query["sslmode"] ?? environment["PGSSLMODE"] ?? "prefer"
        guard let sslMode = SSLMode(rawValue: mode) else {
            throw PostgresTargetError("sslmode \(mode) is not one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.sslMode = sslMode
        self.sslRootCertificate = query["sslrootcert"] ?? environment["PGSSLROOTCERT"]
        self.applicationName = query["application_name"] ?? "handover export"
        let timeout = query["connect_timeout"] ?? environment["PGCONNECT_TIMEOUT"] ?? "10"
        guard let seconds = Int(timeout), seconds > 0 else { throw PostgresTargetError("connect_timeout \(timeout) is not a number of seconds") }
        self.connectTimeout = seconds
        if let password = query["password"] ?? components.password {
            self.password = password
            self.passwordSource = "url"
        } else if let password = environment["PGPASSWORD"] {
            self.password = password
            self.passwordSource = "PGPASSWORD"
        } else {
            let file = environment["PGPASSFILE"] ?? (environment["HOME"].map { $0 + "/.pgpass" })
            if let file, let password = try PasswordFile(path: file)?.password(host: self.host, port: port, database: database, user: user) {
                self.password = password
                self.passwordSource = file
            }
        }
    }

    /// The URL as messages show it: the password, if any, as `***`.
    public var masked: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        let secret = password == nil ? "" : ":***"
        let mode = sslMode == .prefer ? "" : "?sslmode=\(sslMode.rawValue)"
        return "postgres://\(user)\(secret)@\(hostPart):\(port)/\(database)\(mode)"
    }

    /// `text` with the password, wherever it occurs, replaced by `***`.
    public func redacting(_ text: String) -> String {
        guard let password, password.count >= 3 else { return text }
        return text.replacingEvery(password, with: "***")
    }

    /// The connection settings for PostgresNIO, with TLS as `sslmode` asks.
    public func configuration() throws -> PostgresConnection.Configuration {
        if host.hasPrefix("/") {
            return .init(unixSocketPath: "\(host)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: try tls())
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        configuration.options.connectTimeout = .seconds(Int64(connectTimeout))
        return configuration
    }

    private func tls() throws -> PostgresConnection.Configuration.TLS {
        var settings = TLSConfiguration.makeClientConfiguration()
        switch sslMode {
        case .disable: return .disable
        case .allow, .prefer, .require: settings.certificateVerification = .none
        case .verifyCA: settings.certificateVerification = .noHostnameVerification
        case .verifyFull: settings.certificateVerification = .fullVerification
        }
        if let sslRootCertificate {
            settings.trustRoots = .file(sslRootCertificate)
        }
        let context: NIOSSLContext
        do { context = try NIOSSLContext(configuration: settings) } catch {
            throw PostgresTargetError("cannot set up TLS for \(masked)", underlying: error)
        }
        return sslMode == .allow || sslMode == .prefer ? .prefer(context) : .require(context)
    }
}
