import GRDB
import GRDBSQLite
import Ledger
import Projections

/// Inserts rows through one prepared statement, binding each cell straight to SQLite: a bulk
/// load of millions of rows spends its time in SQLite, not in building argument arrays.
struct SQLiteRowInserter {
    private let statement: Statement
    /// Where a time cell's RFC 3339 text is written before it is bound, reused row after row.
    private var scratch: [UInt8] = []

    init(_ statement: Statement) { self.statement = statement }

    /// Binds `cells` to the statement's parameters in order and runs it once.
    mutating func insert(_ cells: [QueryTable.Cell]) throws {
        let handle = statement.sqliteStatement
        for (offset, cell) in cells.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch cell {
            case .time(let time):
                // RFC 3339 written into the reused buffer: no string per time cell.
                scratch.removeAll(keepingCapacity: true)
                time.appendRFC3339(to: &scratch)
                code = scratch.withUnsafeBufferPointer { bindText(handle, index, $0) }
            case .text, .events:
                var text = cell.text
                code = text.withUTF8 { bindText(handle, index, $0) }
            case .int(let value): code = sqlite3_bind_int64(handle, index, Int64(value))
            case .bool(let value): code = sqlite3_bind_int64(handle, index, value ? 1 : 0)
            case .null: code = sqlite3_bind_null(handle, index)
            }
            guard code == SQLITE_OK else { throw ExportError(.io, "SQLite refused a value: \(String(cString: sqlite3_errstr(code)))") }
        }
        let step = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard step == SQLITE_DONE else {
            throw ExportError(.io, "SQLite insert failed: \(String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))")
        }
    }

    /// Binds the UTF-8 `text` to parameter `index`.
    private func bindText(_ handle: SQLiteStatement, _ index: Int32, _ text: UnsafeBufferPointer<UInt8>) -> Int32 {
        guard let base = text.baseAddress, !text.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, SQLiteRowInserter.transient) }
        return sqlite3_bind_text(
            handle, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(text.count), SQLiteRowInserter.transient)
    }

    /// SQLite copies the bytes before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
