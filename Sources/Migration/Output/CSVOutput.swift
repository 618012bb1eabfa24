import Foundation

/// Writes a CSV file atomically: to a temporary file beside it, synced, then renamed, so a
/// reader never sees half a file and a crash leaves the previous version.
public enum CSVOutput {
    /// Writes `header` and `rows` to `path`.
    public static func write(_ path: String, header: [String], rows: [[String]]) throws {
        var text = line(header)
        for row in rows { text += line(row) }
        let temporary = path + ".handover-tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8)) else {
            throw RunRefused("cannot write \(temporary)")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
        try handle.synchronize()
        try handle.close()
        guard rename(temporary, path) == 0 else {
            throw RunRefused("cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// One CSV line (CRLF-free, `\n`-terminated), quoting fields that need it.
    static func line(_ fields: [String]) -> String {
        fields.map { field in
            guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
            return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }.joined(separator: ",") + "\n"
    }
}
