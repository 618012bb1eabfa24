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

    private func move(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil, value: UnsafeRawBufferPointer? = nil) throws -> Entry? {
        precondition(isValid, "an LMDB cursor was used outside the closure it was lent to")
        var k = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
        var v = MDB_val(mv_size: value?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: value?.baseAddress))
        let result = mdb_cursor_get(handle, &k, &v, op)
        if result == MDB_NOTFOUND { return nil }
        try LMDBError.check(result, "mdb_cursor_get(\(database.name))")
        return (
            UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
            UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
        )
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

    /// The entry whose key is exactly `key` (its first value in a `duplicateSort` database).
    public func seek(exactly key: [UInt8]) throws -> Entry? {
        try key.withUnsafeBytes { try move(MDB_SET_KEY, key: $0) }
    }

    // MARK: Databases with several values per key (`duplicateSort`)

    /// The first value of `key` that is greater than or equal to `value`, nil if none is.
    public func seek(key: [UInt8], valueAtLeast value: [UInt8]) throws -> Entry? {
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try seek(key: k, valueAtLeast: v) } }
    }

    /// The first value of `key` that is greater than or equal to `value`, nil if none is.
    /// Seeks in ascending key order are cheap: LMDB stays on the current page when it can.
    public func seek(key: UnsafeRawBufferPointer, valueAtLeast value: UnsafeRawBufferPointer) throws -> Entry? {
        try move(MDB_GET_BOTH_RANGE, key: key, value: value)
    }

    /// The last value of the current key.
    public func lastDuplicate() throws -> Entry? { try move(MDB_LAST_DUP) }
    /// The next value of the current key, nil after its last.
    public func nextDuplicate() throws -> Entry? { try move(MDB_NEXT_DUP) }
    /// The previous value of the current key, nil before its first.
    public func previousDuplicate() throws -> Entry? { try move(MDB_PREV_DUP) }
    /// The first value of the next key.
    public func nextKey() throws -> Entry? { try move(MDB_NEXT_NODUP) }

    /// With `duplicateFixed`: up to a page of the current key's values from the cursor on,
    /// packed end to end in `value`; the cursor moves to the last value returned.
    public func duplicatesPage() throws -> Entry? { try move(MDB_GET_MULTIPLE) }
    /// With `duplicateFixed`: the next page of the current key's values, nil after the last.
    public func nextDuplicatesPage() throws -> Entry? { try move(MDB_NEXT_MULTIPLE) }

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
