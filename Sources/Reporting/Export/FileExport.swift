import Basics
import Foundation
import Ledger
import Projections
import Relays

/// Writes an export as a directory of CSV or JSON-lines files: `events.*` and `event_rows.*`
/// (appended to by `--since-last`), `users.*` (the whole current state, replaced each run) and
/// `manifest.json`, which is written last, atomically, and is the run's commit point.
///
/// A run first cuts `events.*` and `event_rows.*` back to the lengths the manifest records, so
/// a crash after appending but before the manifest leaves nothing half-counted: the next run
/// redoes it. An export made before `event_rows.*` existed (schema version 2) is given the
/// rows of every event it holds by its next run.
///
/// Strings of outside origin are written inert (``InertText``): in CSV, control and bidi
/// characters other than tab, CR and LF as `\u` escapes (the exact value is in the event's
/// JSON), and, unless turned off, OWASP's formula neutralisation; in JSON lines with JSON's
/// own escapes. Files holding personal data are created mode 0600.
struct FileExport {
    let directory: String
    let format: ExportFormat
    let source: ExportSource
    let identity: LedgerCreated
    /// CSV: whether cells that begin like a spreadsheet formula get a `'` in front; nil keeps
    /// what the export at `directory` was made with (on for a new one).
    var neutralizeFormulas: Bool?

    private var fileExtension: String { format == .csv ? "csv" : "jsonl" }
    private var manifestPath: String { directory + "/manifest.json" }

    func run(sinceLast: Bool) throws -> ExportSummary {
        let fm = FileManager.default
        var previous: UInt64 = 0
        var rowsAfter: UInt64 = 0
        var eventsLength: UInt64 = 0
        var rowsLength: UInt64 = 0
        var neutralizes = neutralizeFormulas ?? true
        if let manifest = try FileBytes.readIfPresent(manifestPath, limit: 1 << 20) {
            guard sinceLast else {
                throw ExportError(.outputExists, "\(directory) holds an export; pass --since-last to add what is new to it, or choose a new path")
            }
            let fields: [String: JSONValue]
            do { fields = try JSONValue.parseObject(untrusted: Array(manifest)) } catch {
                throw ExportError(.io, "\(manifestPath) is not a JSON object", underlying: error)
            }
            guard fields["format"]?.stringValue == format.rawValue else {
                throw ExportError(.mismatch, "\(directory) holds a \(fields["format"]?.stringValue ?? "different") export, not \(format.rawValue)")
            }
            try ExportSummary.checkMatches(
                fields.compactMapValues { $0.stringValue ?? $0.boolValue.map { $0 ? "1" : "0" } },
                identity: identity, personalData: source.includePersonalData, path: directory)
            if format == .csv {
                // An export made before neutralisation existed has none.
                let made = fields["formulas_neutralized"]?.boolValue ?? false
                if let neutralizeFormulas, neutralizeFormulas != made {
                    throw ExportError(
                        .mismatch,
                        "\(directory) was exported \(made ? "with" : "without") formula neutralisation; add to it the same way (\(made ? "--neutralize-formulas" : "--no-neutralize-formulas")), or export to a new path"
                    )
                }
                neutralizes = made
            }
            // Counts the export wrote (absent: 0); anything else is no manifest of this code's.
            func count(_ key: String) -> Int64? { fields[key].map { $0.intValue } ?? 0 }
            guard let last = count("last_sequence"), (0..<Int64.max).contains(last), let length = count("events_bytes"), length >= 0,
                let rows = count("event_rows_bytes"), rows >= 0, let version = count("schema_version")
            else {
                throw ExportError(.io, "\(manifestPath): last_sequence, events_bytes, event_rows_bytes or schema_version is not a count")
            }
            guard version <= ExportSchema.version else {
                throw ExportError(
                    .mismatch,
                    "\(directory) holds an export of schema version \(version); this version writes \(ExportSchema.version): export to a new path")
            }
            previous = UInt64(last)
            eventsLength = UInt64(length)
            // event_rows.* came with version 3: an earlier export is given the rows of every event.
            let holdsRows = version >= 3
            guard !holdsRows || fields["event_rows_bytes"] != nil else {
                throw ExportError(.io, "\(manifestPath) records schema version \(version) and no event_rows_bytes")
            }
            rowsAfter = holdsRows ? previous : 0
            rowsLength = holdsRows ? UInt64(rows) : 0
        } else if fm.fileExists(atPath: directory), try !contents(of: directory).isEmpty {
            throw ExportError(.outputExists, "\(directory) exists and is not an export directory; choose a new or empty path")
        }
        do { try fm.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw ExportError(.io, "cannot create \(directory)", underlying: error)
        }

        let events = try appending("events", cutTo: eventsLength, header: ExportAnswers.events.names)
        // Closing after a failure: the failure is what is reported. On success the data was synchronized first.
        defer { try? events.close() }
        let keptRows = try appending("event_rows", cutTo: rowsLength, header: ExportAnswers.eventRows.names)
        defer { try? keptRows.close() }
        let csvStyle: CSVLine.Style = neutralizes ? .spreadsheet : .inert
        let format = self.format
        // Rows are encoded and written on a second thread, a batch at a time, while this one
        // reads the next (``BackgroundBatchWriter``).
        let eventLines = BackgroundBatchWriter<ExportedEvent> { batch in
            var bytes: [UInt8] = []
            bytes.reserveCapacity(batch.count * 1024)
            for event in batch {
                if format == .csv {
                    CSVLine.append(ExportAnswers.events.cells(event), style: csvStyle, to: &bytes)
                } else {
                    bytes += InertText.json(event.jsonLine) + [0x0A]
                }
            }
            try events.write(contentsOf: bytes)
        }
        let rowLayout = JSONLineLayout(columns: ExportAnswers.eventRows.names)
        let rowLines = BackgroundBatchWriter<ExportedRow> { batch in
            try keptRows.write(contentsOf: Self.lines(batch, ExportAnswers.eventRows, format: format, style: csvStyle, layout: rowLayout))
        }
        // users.* is written whole to a temporary file as the users are read, then renamed.
        let users = try AtomicFile.Writer(replacing: directory + "/users." + fileExtension, mode: fileMode)
        let userLayout = JSONLineLayout(columns: ExportAnswers.users.names)
        let userLines = BackgroundBatchWriter<UserRow> { batch in
            try users.write(Self.lines(batch, ExportAnswers.users, format: format, style: csvStyle, layout: userLayout))
        }
        try users.write(header(ExportAnswers.users.names))
        var added = 0
        var rowCount = 0
        var userCount = 0
        let last = try source.read(
            after: previous, rowsAfter: rowsAfter, users: .all,
            to: .init(
                event: { event in
                    try eventLines.append(event)
                    added += 1
                },
                row: { row in
                    try rowLines.append(row)
                    rowCount += 1
                },
                user: { user in
                    try userLines.append(user)
                    userCount += 1
                })
        ).last
        try eventLines.finish()
        try rowLines.finish()
        try userLines.finish()
        try events.synchronize()
        try keptRows.synchronize()
        let length = try events.offset()
        let rowsBytes = try keptRows.offset()
        try users.commit()
        let summary = ExportSummary(
            format: format, path: directory, fromSequence: previous + 1, toSequence: max(last, previous), eventsAdded: added, rowsAdded: rowCount,
            usersWritten: userCount)
        var fields = source.manifestFields(format, identity: identity, lastSequence: summary.toSequence)
        fields["events_bytes"] = .int(Int64(length))
        fields["event_rows_bytes"] = .int(Int64(rowsBytes))
        if format == .csv { fields["formulas_neutralized"] = .bool(neutralizes) }
        let manifest: JSONValue = .object(fields)
        try AtomicFile.write(manifest.canonicalBytes + [0x0A], to: manifestPath, mode: nil)
        return summary
    }

    /// The names in `directory`, which must be a directory this user can read.
    private func contents(of directory: String) throws -> [String] {
        do { return try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw ExportError(
                .io, "\(directory) exists and is not a directory this user can read; choose a new or empty directory", underlying: error)
        }
    }

    private func header(_ columns: [String]) -> [UInt8] {
        format == .csv ? Array(CSVLine.header(columns).utf8) : []
    }

    /// `NAME.*` opened for appending, created if missing, cut back to `length` bytes; a CSV
    /// file's header is written when it is empty.
    private func appending(_ name: String, cutTo length: UInt64, header columns: [String]) throws -> FileHandle {
        let path = directory + "/" + name + "." + fileExtension
        if !FileManager.default.fileExists(atPath: path), !FileManager.default.createFile(atPath: path, contents: nil, attributes: fileAttributes) {
            throw ExportError(.io, "cannot create \(path)")
        }
        guard let file = FileHandle(forWritingAtPath: path) else { throw ExportError(.io, "cannot write \(path)") }
        do {
            try file.truncate(atOffset: length)
            if length == 0 { try file.write(contentsOf: header(columns)) }
        } catch {
            try? file.close()
            throw error
        }
        return file
    }

    /// `batch` under `answer`'s columns: CSV lines in `style`, or JSON lines in `layout` (made
    /// for `answer`'s columns), written inert.
    private static func lines<Row>(
        _ batch: [Row], _ answer: Answer<Row>, format: ExportFormat, style: CSVLine.Style, layout: JSONLineLayout
    ) -> [UInt8] {
        var bytes: [UInt8] = []
        for row in batch {
            let cells = answer.cells(row)
            if format == .csv {
                CSVLine.append(cells, style: style, to: &bytes)
            } else {
                bytes += InertText.json(layout.object(cells)) + [0x0A]
            }
        }
        return bytes
    }

    /// The mode of the files an export creates: 0600 when they hold personal data, else the umask's.
    private var fileMode: mode_t? { source.includePersonalData ? 0o600 : nil }

    private var fileAttributes: [FileAttributeKey: Any]? { fileMode.map { [.posixPermissions: $0] } }
}
