import GRDB
import GRDBSQLite
import Projections

/// Inserts rows through one prepared statement, binding each cell straight to SQLite: a bulk
/// load of millions of rows spends its time in SQLite, not in building argument arrays.
struct SQLiteRowInserter {
    private let statement: Statement

    init(_ statement: Statement) { self.statement = statement }

    /// Binds `cells` to the statement's parameters in order and runs it once.
    func insert(_ cells: [QueryTable.Cell]) throws {
        let handle = statement.sqliteStatement
        for (offset, cell) in cells.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch cell {
            case .text, .time, .events:
                var text = cell.text
                code = text.withUTF8 { utf8 in
                    guard let base = utf8.baseAddress, !utf8.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, SQLiteRowInserter.transient) }
                    return sqlite3_bind_text(handle, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(utf8.count), SQLiteRowInserter.transient)
                }
            case .int(let value): code = sqlite3_bind_int64(handle, index, Int64(value))
            case .bool(let value): code = sqlite3_bind_int64(handle, index, value ? 1 : 0)
            case .null: code = sqlite3_bind_null(handle, index)
            }
            guard code == SQLITE_OK else { throw ExportError(.io, "SQLite refused a value: \(String(cString: sqlite3_errstr(code)))") }
        }
        let step = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard step == SQLITE_DONE else { throw ExportError(.io, "SQLite insert failed: \(String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))") }
    }

    /// SQLite copies the bytes before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
