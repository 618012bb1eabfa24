import Basics
import Foundation
import Ledger
import Projections

/// A JSON-lines export as one stream (`export --format jsonl --out -`): every line one JSON
/// object `{"row":{...},"table":"NAME"}`, NAME one of `events`, `event_rows` and `users` (each
/// row as the file of that name in a directory export holds it), and last a `manifest` line
/// (as `manifest.json`, with no byte counts: a stream cannot be added to). A stream is always a
/// whole export: `--since-last` needs a directory. A stream cut short (an error, a closed pipe)
/// has no `manifest` line: without one it is not a whole export.
struct StreamExport {
    let source: ExportSource
    let identity: LedgerCreated

    /// Writes the export to `output`, a buffer at a time.
    func run(to output: FileHandle) throws -> ExportSummary {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        func line(_ table: String, _ row: [UInt8]) throws {
            buffer += Array(#"{"row":"#.utf8) + row + Array(#","table":""#.utf8) + Array(table.utf8) + Array("\"}\n".utf8)
            if buffer.count >= 1 << 20 {
                try output.write(contentsOf: buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        let rowLayout = JSONLineLayout(columns: ExportAnswers.eventRows.names)
        let userLayout = JSONLineLayout(columns: ExportAnswers.users.names)
        var (events, rows, users) = (0, 0, 0)
        let last = try source.read(
            after: 0, rowsAfter: 0, users: .all,
            to: .init(
                event: { event in
                    try line("events", InertText.json(event.jsonLine))
                    events += 1
                },
                row: { row in
                    try line("event_rows", InertText.json(rowLayout.object(ExportAnswers.eventRows.cells(row))))
                    rows += 1
                },
                user: { user in
                    try line("users", InertText.json(userLayout.object(ExportAnswers.users.cells(user))))
                    users += 1
                })
        ).last
        let manifest: JSONValue = .object(source.manifestFields(.jsonl, identity: identity, lastSequence: last))
        try line("manifest", manifest.canonicalBytes)
        try output.write(contentsOf: buffer)
        return ExportSummary(
            format: .jsonl, path: "-", fromSequence: 1, toSequence: last, eventsAdded: events, rowsAdded: rows, usersWritten: users)
    }
}
