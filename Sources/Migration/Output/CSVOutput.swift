import Foundation
import Ledger

/// Writes a CSV file atomically: to a temporary file beside it, synced, then renamed, so a
/// reader never sees half a file and a crash leaves the previous version. The file is mode
/// 0600: a run's output maps the team's users to Apple's identifiers, and the exchange's holds
/// their email addresses in clear.
public enum CSVOutput {
    /// Writes `header` and `rows` to `path`.
    public static func write(_ path: String, header: [String], rows: [[String]]) throws {
        var text = line(header)
        for row in rows { text += line(row) }
        let temporary = path + ".handover-tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: nil, attributes: [.posixPermissions: 0o600]),
              let handle = FileHandle(forWritingAtPath: temporary) else {
            throw OutputError(description: "cannot write \(temporary)")
        }
        try handle.write(contentsOf: Data(text.utf8))
        try handle.synchronize()
        try handle.close()
        guard rename(temporary, path) == 0 else {
            throw OutputError(description: "cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The output file could not be written.
    public struct OutputError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// One CSV line, `\n`-terminated, quoting fields that need it; the values are written
    /// exactly, for the programs that read the file back.
    static func line(_ fields: [String]) -> String { CSVField.line(fields, terminator: "\n") }
}
