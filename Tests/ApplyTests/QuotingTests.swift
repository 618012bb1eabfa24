import Apply
import Basics
import GRDB
import Ledger
import TestSupport
import Testing

/// A name from the operator is never read as SQL, and a word printed for a shell is read back
/// as it was: every quote is found, a quote followed by a combining mark (one character to
/// Swift, a quote to SQL and to a shell) included.
@Suite("quoting for SQL and for a shell")
struct QuotingTests {
    static let names = ["my \"\u{065C}t", "a\"\u{0301}\"\u{20DD}b", "\"", "x\"\"y", "'\u{0301}; drop", "plain", "e\u{301}"]

    @Test("each name, quoted, creates a table and column SQLite reports under exactly that name", arguments: names)
    func sqlReadsTheNameBack(name: String) throws {
        let dir = TemporaryDirectory()
        let identifier = try SQLIdentifier(name)
        let queue = try DatabaseQueue(path: dir.sub("app.sqlite"))
        let (table, column) = try queue.write { db in
            try db.execute(sql: "CREATE TABLE \(identifier.quoted) (\(identifier.quoted) TEXT)")
            let table = try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            let column = try String.fetchOne(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [name])
            return (table, column)
        }
        #expect(table == name)
        #expect(column == name)
    }

    @Test("each word, quoted for a shell, is read back by sh as that word", arguments: names)
    func shellReadsTheWordBack(word: String) throws {
        let printed = try runCommand("/bin/sh", ["-c", "printf '%s' " + ShellWord.quoted(word)])
        #expect(printed.status == 0)
        #expect(Array(printed.out.utf8) == Array(word.utf8))
    }
}
