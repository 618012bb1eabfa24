import Basics
import Foundation
import Ledger
import PostgresAccess
import Projections
import Relays

/// Feeds reporting: writes the users projection and the events as CSV, JSON lines or SQLite.
///
/// Personal data (email addresses) is opened only when asked for, and never for erased
/// users, whose keys are gone.
public struct Exporter: Sendable {
    let ledger: Ledger
    let projection: UserProjection
    /// Whether email addresses are written in clear.
    public var includePersonalData: Bool
    /// CSV: whether a cell that begins like a spreadsheet formula (`=`, `+`, `-`, `@`, tab,
    /// CR) gets a `'` in front (OWASP's CSV-injection defence); nil keeps what the export being
    /// added to was made with, and turns it on for a new one.
    public var neutralizeFormulas: Bool?

    public init(ledger: Ledger, projection: UserProjection, includePersonalData: Bool = false) {
        self.ledger = ledger
        self.projection = projection
        self.includePersonalData = includePersonalData
    }

    /// Writes a new export to `path`, or with `sinceLast` adds what is new since the export
    /// already there. Running again after a crash neither duplicates nor skips.
    public func export(_ format: ExportFormat, to path: String, sinceLast: Bool) throws -> ExportSummary {
        let identity = try ledger.identity()
        switch format {
        case .sqlite: return try SQLiteExport(path: path, source: source, identity: identity).run(sinceLast: sinceLast)
        case .csv, .jsonl:
            return try FileExport(directory: path, format: format, source: source, identity: identity, neutralizeFormulas: neutralizeFormulas).run(
                sinceLast: sinceLast)
        case .postgres: throw ExportError(.usage, "a postgres export goes through export(to: PostgresTarget, ...)")
        }
    }

    /// Writes a whole export of `format` to `output` (standard output, for `--out -`): JSON
    /// lines as one stream of tagged lines (``StreamExport``), SQLite as the database file's
    /// bytes (made in a private temporary file first). CSV is a directory of files, refused.
    public func export(_ format: ExportFormat, to output: FileHandle) throws -> ExportSummary {
        let identity = try ledger.identity()
        switch format {
        case .jsonl: return try StreamExport(source: source, identity: identity).run(to: output)
        case .sqlite:
            // Written whole first (SQLite needs a file); a copy a killed export leaves is removed
            // by the next command that makes a scratch directory.
            let scratch = try ScratchDirectory.temporary(for: "export")
            defer { scratch.remove() }
            var summary = try SQLiteExport(path: scratch.file("export.sqlite"), source: source, identity: identity).run(sinceLast: false)
            try FileBytes.copy(scratch.file("export.sqlite"), to: output)
            summary.path = "-"
            return summary
        case .csv:
            throw ExportError(
                .usage,
                "a csv export is a directory of files (users, events, event_rows and manifest.json), which standard output cannot hold: give --out a directory, or use --format jsonl or sqlite for one stream"
            )
        case .postgres: throw ExportError(.usage, "a postgres export goes to the database --out names, not to standard output")
        }
    }

    /// ``export(_:to:sinceLast:)`` from async code: the ledger is read on a thread outside the
    /// pool async tasks run on (``OffPool``).
    public func exportInBackground(_ format: ExportFormat, to path: String, sinceLast: Bool) async throws -> ExportSummary {
        try await OffPool.run { [self] in try export(format, to: path, sinceLast: sinceLast) }
    }
}
