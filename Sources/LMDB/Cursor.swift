import CLMDB

/// A position in one database, valid only inside the closure it is lent to.
///
/// Each move returns the entry it lands on, or nil past either end; the buffers are valid
/// until the transaction ends.
public final class Cursor {
    /// One key/value pair; the buffers point into the memory map.
    public typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    let handle: OpaquePointer
    let database: Database
    var isValid = true

    init(_ handle: OpaquePointer, database: Database) {
        self.handle = handle
        self.database = database
    }

    private func move(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws -> Entry? {
        precondition(isValid, "an LMDB cursor was used outside the closure it was lent to")
        var k = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
        var v = MDB_val()
        let result = mdb_cursor_get(handle, &k, &v, op)
        if result == MDB_NOTFOUND { return nil }
        try LMDBError.check(result, "mdb_cursor_get(\(database.name))")
        return (UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
                UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// The first entry.
    public func first() throws -> Entry? { try move(MDB_FIRST) }
    /// The last entry.
    public func last() throws -> Entry? { try move(MDB_LAST) }
    /// The entry after the current one.
    public func next() throws -> Entry? { try move(MDB_NEXT) }
    /// The entry before the current one.
    public func previous() throws -> Entry? { try move(MDB_PREV) }
    /// The first entry whose key is greater than or equal to `key`.
    public func seek(atLeast key: UnsafeRawBufferPointer) throws -> Entry? { try move(MDB_SET_RANGE, key: key) }
    /// The first entry whose key is greater than or equal to `key`.
    public func seek(atLeast key: [UInt8]) throws -> Entry? {
        try key.withUnsafeBytes { try seek(atLeast: $0) }
    }

    /// The last entry whose key is less than or equal to `key`: for "the newest version at
    /// or before" lookups in databases keyed by prefix ‖ big-endian sequence.
    public func seek(atMost key: [UInt8]) throws -> Entry? {
        if let entry = try seek(atLeast: key) {
            if entry.key.elementsEqual(key) { return entry }
            return try previous()
        }
        return try last()
    }
}
