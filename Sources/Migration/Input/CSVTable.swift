import Basics
import Foundation
import Ledger

/// A CSV file read by RFC 4180's rules (quoted fields with `""` escapes and embedded commas
/// or line breaks; CRLF or LF; a UTF-8 byte-order mark ignored), every row keeping the line
/// it started on so problems can name it.
public struct CSVTable: Sendable {
    /// One row and the 1-based line it starts on, its fields read by the header's names.
    public struct Row: Sendable, Equatable {
        public let line: Int
        public let fields: [String]
        /// The file's header row.
        public let header: [String]

        /// The field under the header's `column`; nil when the header has no such column or
        /// this row ends before it.
        public subscript(_ column: String) -> String? {
            guard let index = header.firstIndex(of: column), index < fields.count else { return nil }
            return fields[index]
        }
    }

    /// The header row's field names.
    public let header: [String]
    /// The data rows (blank lines are skipped).
    public let rows: [Row]

    /// Reads and parses the file at `path`; throws an ``InputProblem`` when it cannot be read.
    public init(path: String) throws {
        try self.init(bytes: try CSVTable.read(path), file: path)
    }

    /// The largest CSV read: 2 GiB, some 30 million users (a list is read whole; more users
    /// go in more files, and a run skips the users already done).
    public static let maximumFileBytes = 1 << 31

    /// The bytes of the CSV at `path`: a regular file of at most ``maximumFileBytes``.
    static func read(_ path: String) throws(InputProblem) -> [UInt8] {
        do { return try FileBytes.read(path, limit: maximumFileBytes) } catch let error as FileError where error.message.hasPrefix(path + " ") {
            // "PATH is larger than …": the problem names the file itself.
            throw InputProblem(file: path, line: nil, String(error.message.dropFirst(path.count + 1)))
        } catch { throw InputProblem(file: path, line: nil, "cannot be read: \(ErrorText.describing(error))") }
    }

    /// Parses `bytes`; throws ``InputProblem``s naming a line for an unterminated quote,
    /// text after a closing quote, invalid UTF-8 or a missing header.
    public init(bytes: [UInt8], file: String) throws {
        var rows: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1
        var rowLine = 1
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var inQuotes = false
        var wasQuoted = false
        var rowHasContent = false

        func finishField() throws {
            guard let text = String(validating: field, as: UTF8.self) else {
                throw InputProblem(file: file, line: rowLine, "is not valid UTF-8")
            }
            fields.append(text)
            field.removeAll(keepingCapacity: true)
            wasQuoted = false
        }
        func finishRow() throws {
            try finishField()
            if rowHasContent { rows.append((rowLine, fields)) }
            fields.removeAll(keepingCapacity: true)
            rowHasContent = false
        }

        while i < bytes.count {
            let byte = bytes[i]
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    if i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "\"") {
                        field.append(byte)
                        i += 2
                        continue
                    }
                    inQuotes = false
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
                i += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                guard field.isEmpty, !wasQuoted else {
                    throw InputProblem(file: file, line: line, "has a quote inside an unquoted field (quote the whole field and double inner quotes)")
                }
                inQuotes = true
                wasQuoted = true
                rowHasContent = true
            case UInt8(ascii: ","):
                try finishField()
                rowHasContent = true
            case UInt8(ascii: "\r") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "\n"):
                break
            case UInt8(ascii: "\n"):
                try finishRow()
                line += 1
                rowLine = line
            default:
                guard !wasQuoted else {
                    throw InputProblem(file: file, line: line, "has text after a closing quote")
                }
                field.append(byte)
                rowHasContent = true
            }
            i += 1
        }
        guard !inQuotes else { throw InputProblem(file: file, line: rowLine, "opens a quoted field that never closes") }
        try finishRow()
        guard let first = rows.first else { throw InputProblem(file: file, line: 1, "is empty: expected a header row") }
        let header = first.fields.map(\.trimmingWhitespace)
        self.header = header
        self.rows = rows.dropFirst().map { Row(line: $0.line, fields: $0.fields, header: header) }
    }
}
