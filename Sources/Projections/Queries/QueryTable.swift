import Foundation
import Ledger

/// A query's answer: named columns and typed cells, rendered as a table, JSON or CSV.
public struct QueryTable: Sendable {
    /// One typed value.
    public enum Cell: Sendable, Equatable {
        case text(String)
        case int(Int)
        case bool(Bool)
        case time(Timestamp)
        case null

        /// The cell as text (times in RFC 3339 UTC, null as empty).
        public var text: String {
            switch self {
            case .text(let s): return s
            case .int(let i): return String(i)
            case .bool(let b): return b ? "true" : "false"
            case .time(let t): return t.rfc3339
            case .null: return ""
            }
        }
    }

    /// Output formats.
    public enum Format: String, Sendable, CaseIterable {
        case table, json, csv
    }

    public var columns: [String]
    public var rows: [[Cell]]

    public init(columns: [String], rows: [[Cell]] = []) {
        self.columns = columns
        self.rows = rows
    }

    /// Renders the answer in `format`.
    public func render(_ format: Format) -> String {
        switch format {
        case .table: return renderTable()
        case .json: return renderJSON()
        case .csv: return renderCSV()
        }
    }

    private func renderTable() -> String {
        guard !rows.isEmpty else { return "(no rows)\n" }
        let texts = rows.map { $0.map { $0.text.isEmpty ? "-" : $0.text } }
        var widths = columns.map(\.count)
        for row in texts { for (i, t) in row.enumerated() { widths[i] = max(widths[i], t.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, t in t.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").droppingTrailingSpaces()
        }
        var out = line(columns) + "\n" + line(widths.map { String(repeating: "-", count: $0) }) + "\n"
        for row in texts { out += line(row) + "\n" }
        out += "(\(rows.count) row\(rows.count == 1 ? "" : "s"))\n"
        return out
    }

    /// The rows as a JSON array of objects keyed by column (times in RFC 3339 UTC).
    public var json: JSONValue {
        .array(rows.map { row in
            var object: [String: JSONValue] = [:]
            for (column, cell) in zip(columns, row) {
                switch cell {
                case .text(let s): object[column] = .string(s)
                case .int(let i): object[column] = .int(Int64(i))
                case .bool(let b): object[column] = .bool(b)
                case .time(let t): object[column] = .string(t.rfc3339)
                case .null: object[column] = .null
                }
            }
            return .object(object)
        })
    }

    private func renderJSON() -> String {
        String(decoding: json.canonicalBytes, as: UTF8.self) + "\n"
    }

    /// One CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, quote or line break.
    public static func csvField(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private func renderCSV() -> String {
        var out = columns.map(QueryTable.csvField).joined(separator: ",") + "\r\n"
        for row in rows { out += row.map { QueryTable.csvField($0.text) }.joined(separator: ",") + "\r\n" }
        return out
    }
}

extension String {
    fileprivate func droppingTrailingSpaces() -> String {
        String(self[..<(lastIndex { $0 != " " }.map { index(after: $0) } ?? startIndex)])
    }
}
