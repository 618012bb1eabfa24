import CLMDB

/// A read-only view of an ``Environment``, valid only inside the closure it is lent to.
///
/// Byte buffers it returns point into the memory map and are valid only until the
/// transaction ends; copy what must outlive it.
public class ReadTransaction {
    let handle: OpaquePointer
    private(set) var isValid = true
    /// Cursors kept for point look-ups, one per database, closed when the transaction ends.
    private var lookupCursors: [MDB_dbi: Cursor] = [:]

    init(_ handle: OpaquePointer) { self.handle = handle }

    func invalidate() {
        for cursor in lookupCursors.values {
            cursor.isValid = false
            mdb_cursor_close(cursor.handle)
        }
        lookupCursors = [:]
        isValid = false
    }

    /// A cursor over `database` for point look-ups (seek, then read the entry it lands on),
    /// opened once and kept until the transaction ends: for many look-ups in one transaction.
    /// Every caller moves the same cursor, so never iterate with it; use ``withCursor(_:_:)``.
    public final func lookupCursor(_ database: Database) throws -> Cursor {
        checkValid()
        if let cursor = lookupCursors[database.handle] { return cursor }
        var handle: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(self.handle, database.handle, &handle), "mdb_cursor_open(\(database.name))")
        let cursor = Cursor(handle!, database: database)
        lookupCursors[database.handle] = cursor
        return cursor
    }

    @inline(__always)
    final func checkValid() {
        precondition(isValid, "an LMDB transaction was used outside the closure it was lent to")
    }

    /// Opens the named database `name`, creating it when `create` is set (write transactions only).
    public final func openDatabase(_ name: String, flags: Database.Flags = [], create: Bool) throws -> Database {
        checkValid()
        var dbi: MDB_dbi = 0
        let all = flags.rawValue | (create ? UInt32(MDB_CREATE) : 0)
        try LMDBError.check(mdb_dbi_open(handle, name, all, &dbi), "mdb_dbi_open(\(name))")
        return Database(handle: dbi, name: name, flags: flags)
    }

    /// The flags `database` was created with (as stored, whatever it was opened with).
    public final func flags(of database: Database) throws -> Database.Flags {
        checkValid()
        var flags: UInt32 = 0
        try LMDBError.check(mdb_dbi_flags(handle, database.handle, &flags), "mdb_dbi_flags(\(database.name))")
        return Database.Flags(rawValue: flags).intersection([.duplicateSort, .duplicateFixed])
    }

    /// The names of the environment's named databases, in byte order.
    public final func databaseNames() throws -> [String] {
        checkValid()
        var main: MDB_dbi = 0
        try LMDBError.check(mdb_dbi_open(handle, nil, 0, &main), "mdb_dbi_open(main)")
        return try withCursor(Database(handle: main, name: "main", flags: [])) { cursor in
            var names: [String] = []
            var entry = try cursor.first()
            while let (key, _) = entry {
                names.append(String(decoding: key, as: UTF8.self))
                entry = try cursor.next()
            }
            return names
        }
    }

    /// The value stored under `key`, or nil; the buffer is valid until the transaction ends.
    public final func get(_ database: Database, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        checkValid()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let result = mdb_get(handle, database.handle, &k, &v)
        if result == MDB_NOTFOUND { return nil }
        try LMDBError.check(result, "mdb_get(\(database.name))")
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    /// A copy of the value stored under `key`, or nil.
    public final func get(_ database: Database, key: [UInt8]) throws -> [UInt8]? {
        try key.withUnsafeBytes { k in try get(database, key: k).map { Array($0) } }
    }

    /// Lends a cursor over `database` to `body`; the cursor is closed when `body` returns.
    public final func withCursor<T>(_ database: Database, _ body: (Cursor) throws -> T) throws -> T {
        checkValid()
        var cursor: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(handle, database.handle, &cursor), "mdb_cursor_open(\(database.name))")
        let wrapper = Cursor(cursor!, database: database)
        defer {
            wrapper.isValid = false
            mdb_cursor_close(cursor)
        }
        return try body(wrapper)
    }

    /// The bytes `database`'s pages take (branch, leaf and overflow pages); `Int.max` when the
    /// counts the file holds (an altered copy's) add up to more.
    public final func bytes(of database: Database) throws -> Int {
        checkValid()
        var stat = MDB_stat()
        try LMDBError.check(mdb_stat(handle, database.handle, &stat), "mdb_stat(\(database.name))")
        var pages = 0
        for count in [stat.ms_branch_pages, stat.ms_leaf_pages, stat.ms_overflow_pages] {
            let (sum, overflow) = pages.addingReportingOverflow(count)
            pages = overflow ? .max : sum
        }
        let (bytes, overflow) = pages.multipliedReportingOverflow(by: Int(stat.ms_psize))
        return overflow ? .max : bytes
    }

    /// The number of entries in `database`.
    public final func count(_ database: Database) throws -> Int {
        checkValid()
        var stat = MDB_stat()
        try LMDBError.check(mdb_stat(handle, database.handle, &stat), "mdb_stat(\(database.name))")
        return stat.ms_entries
    }
}

/// A read-write transaction, valid only inside the closure ``Environment/write(_:)`` lends it to.
public final class WriteTransaction: ReadTransaction {
    private var recorder: WriteRecorder?

    override init(_ handle: OpaquePointer) { super.init(handle) }

    func record(to recorder: WriteRecorder?) { self.recorder = recorder }

    /// Stores `value` under `key`. Returns false, writing nothing, when the key exists and
    /// `flags` contain `noOverwrite` or `noDuplicateData`.
    @discardableResult
    public func put(_ database: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: PutFlags = []) throws -> Bool {
        checkValid()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let result = mdb_put(handle, database.handle, &k, &v, flags.rawValue)
        if result == MDB_KEYEXIST, !flags.isDisjoint(with: [.noOverwrite, .noDuplicateData]) { return false }
        try LMDBError.check(result, "mdb_put(\(database.name))")
        recorder?.put(database, key: key, value: value, flags: flags)
        return true
    }

    /// Stores `value` under `key` (byte-array convenience).
    @discardableResult
    public func put(_ database: Database, key: [UInt8], value: [UInt8], flags: PutFlags = []) throws -> Bool {
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try put(database, key: k, value: v, flags: flags) } }
    }

    /// Deletes `key` (every value of it in a `duplicateSort` database); false if absent.
    @discardableResult
    public func delete(_ database: Database, key: [UInt8]) throws -> Bool {
        checkValid()
        return try key.withUnsafeBytes { raw in
            var k = MDB_val(mv_size: raw.count, mv_data: UnsafeMutableRawPointer(mutating: raw.baseAddress))
            let result = mdb_del(handle, database.handle, &k, nil)
            if result == MDB_NOTFOUND { return false }
            try LMDBError.check(result, "mdb_del(\(database.name))")
            return true
        }
    }

    /// Deletes one value of `key` in a `duplicateSort` database; false if absent.
    @discardableResult
    public func delete(_ database: Database, key: [UInt8], value: [UInt8]) throws -> Bool {
        checkValid()
        return try key.withUnsafeBytes { rawKey in
            try value.withUnsafeBytes { rawValue in
                var k = MDB_val(mv_size: rawKey.count, mv_data: UnsafeMutableRawPointer(mutating: rawKey.baseAddress))
                var v = MDB_val(mv_size: rawValue.count, mv_data: UnsafeMutableRawPointer(mutating: rawValue.baseAddress))
                let result = mdb_del(handle, database.handle, &k, &v)
                if result == MDB_NOTFOUND { return false }
                try LMDBError.check(result, "mdb_del(\(database.name))")
                return true
            }
        }
    }

    /// Removes every entry of `database`, keeping the database itself.
    public func clear(_ database: Database) throws {
        checkValid()
        try LMDBError.check(mdb_drop(handle, database.handle, 0), "mdb_drop(\(database.name))")
    }

    /// Deletes `database` itself from the environment; its handle is invalid afterwards.
    public func drop(_ database: Database) throws {
        checkValid()
        try LMDBError.check(mdb_drop(handle, database.handle, 1), "mdb_drop(\(database.name), delete)")
    }
}
