import Apply
import Foundation

extension Harness {
    /// What the operator gives `apply`: the `--users` file and the mapping's arguments
    /// (`--table`, `--key`, `--set`, `--where`), as `users ~~~~ table ~~~~ key ~~~~ set ~~~~
    /// where` (each line of the set part one `--set`; an empty `where` part gives none).
    static let applyInputs = Harness(
        "apply-inputs", "apply's --users file (one account_id a line) and its mapping (--table, --key, --set, --where)"
    ) { input in
        let parts = FuzzInput(input, parts: 5)
        var accepted = false
        if let list = try? AccountList(bytes: parts[0], path: "users.txt") {
            accepted = true
            HarnessCheck.expect(
                list.accounts.allSatisfy { !$0.isEmpty && $0.utf8.count <= 400 && $0 == $0.trimming(.whitespaces) },
                "a listed account_id is empty, too long or holds the blanks around it")
        }
        let text = (1...4).map { String(decoding: parts[$0], as: UTF8.self) }
        // Each line of the set part is one --set.
        let sets = text[2].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if let mapping = try? ApplyMapping(table: text[0], key: text[1], set: sets, condition: text[3].isEmpty ? nil : text[3]) {
            accepted = true
            // A name is never read as SQL: quoted, each quote doubled, so the quoted form read
            // back as SQL reads it is the name given.
            let columns = [mapping.keyColumn] + mapping.mapped.map(\.column)
            for identifier in [mapping.table] + columns {
                HarnessCheck.expect(
                    Self.unquoted(Array(identifier.quoted.utf8)) == Array(identifier.name.utf8),
                    "the name \(identifier.name) is not quoted whole: \(identifier.quoted)")
            }
            HarnessCheck.expect(Set(columns).count == columns.count, "--key and --set name the same column twice")
            HarnessCheck.expect(mapping.mapped.count == sets.count, "a --set was dropped or counted twice")
        }
        if !accepted { throw HarnessRefusal() }
    }

    /// The name an SQL quoted identifier's bytes stand for (its quotes off, each doubled quote
    /// one), or nil when the bytes are not one quoted identifier.
    static func unquoted(_ bytes: [UInt8]) -> [UInt8]? {
        let quote = UInt8(ascii: "\"")
        guard bytes.count >= 2, bytes.first == quote, bytes.last == quote else { return nil }
        var name: [UInt8] = []
        var i = 1
        while i < bytes.count - 1 {
            if bytes[i] == quote {
                guard i + 1 < bytes.count - 1, bytes[i + 1] == quote else { return nil }
                i += 1
            }
            name.append(bytes[i])
            i += 1
        }
        return name
    }
}
