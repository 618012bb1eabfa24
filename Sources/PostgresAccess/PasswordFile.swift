import Basics
import Foundation

/// A libpq password file (`~/.pgpass`): lines of `host:port:database:user:password`, where a
/// field may be `*`, `\:` is a colon and `\\` a backslash, and `#` starts a comment. The first
/// matching line wins.
struct PasswordFile {
    private let lines: [[String]]

    /// Reads the file at `path`; nil if there is none. Like libpq, a file others may read or
    /// write is not used; unlike libpq, that is an error rather than a warning, so a refused
    /// login is not the first sign of it.
    init?(path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        guard info.st_mode & 0o077 == 0 else {
            throw PostgresTargetError(
                "the password file \(path) may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); as libpq, it is not used so: chmod 600 \(path)"
            )
        }
        let text: String
        do { text = String(decoding: try FileBytes.read(path, limit: 1 << 20), as: UTF8.self) } catch {
            throw PostgresTargetError("cannot read the password file \(path)", underlying: error)
        }
        lines = text.split(whereSeparator: \.isNewline).compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let fields = PasswordFile.fields(of: String(line))
            return fields.count == 5 ? fields : nil
        }
    }

    /// The password for this connection, if a line matches it.
    func password(host: String, port: Int, database: String, user: String) -> String? {
        let wanted = [host, String(port), database, user]
        return lines.first { line in zip(line, wanted).allSatisfy { $0 == "*" || $0 == $1 } }?[4]
    }

    /// The colon-separated fields of `line`, escapes undone.
    private static func fields(of line: String) -> [String] {
        var fields: [String] = []
        var current = ""
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" && fields.count < 4 {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields
    }
}
