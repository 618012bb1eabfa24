import Basics
import Foundation
import Ledger

/// Answers as code older than the columns added since wrote them: what the tests comparing an
/// upgraded ledger's answers with an old fixture's hold this code's output to. A column added
/// to an answer adds a fact; it changes none of those already there.
public enum OlderAnswers {
    /// The columns answers gained after the fixtures were written: the user's apply outcomes.
    public static let columnsAdded: Set<String> = [
        "apply_outcome", "applied_at", "email_apply_outcome", "email_applied_at", "email_forwarding_apply_outcome",
        "email_forwarding_applied_at",
    ]

    /// `csv` (CRLF lines, RFC 4180 fields) without the columns in ``columnsAdded``, every other
    /// field kept byte for byte as written.
    public static func withoutAddedColumns(csv: String) -> String {
        let lines = records(csv)
        guard let header = lines.first else { return csv }
        let keep = header.indices.filter { !columnsAdded.contains(header[$0]) }
        return lines.map { fields in keep.map { $0 < fields.count ? fields[$0] : "" }.joined(separator: ",") + "\r\n" }.joined()
    }

    /// `json` (an object, or lines of objects) without the members named in ``columnsAdded``, at any depth.
    public static func withoutAddedMembers(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members): return .object(members.filter { !columnsAdded.contains($0.key) }.mapValues(withoutAddedMembers))
        case .array(let items): return .array(items.map(withoutAddedMembers))
        default: return value
        }
    }

    /// The records of `csv`, each field as its raw text (quotes kept).
    private static func records(_ csv: String) -> [[String]] {
        var records: [[String]] = []
        var fields: [String] = []
        var field = ""
        var quoted = false
        var characters = Array(csv.unicodeScalars)[...]
        while let c = characters.popFirst() {
            if c == "\"" { quoted.toggle() }
            if !quoted && c == "," {
                fields.append(field)
                field = ""
            } else if !quoted && c == "\r" && characters.first == "\n" {
                characters.removeFirst()
                fields.append(field)
                records.append(fields)
                (fields, field) = ([], "")
            } else {
                field.unicodeScalars.append(c)
            }
        }
        if !field.isEmpty || !fields.isEmpty { records.append(fields + [field]) }
        return records
    }
}
