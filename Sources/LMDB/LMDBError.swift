import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error returned by LMDB, carrying LMDB's own result code.
///
/// Callers match on ``code``:
///
/// ```swift
/// catch let error as LMDBError where error.code == .mapFull { ... }
/// ```
public struct LMDBError: Error, Sendable, CustomStringConvertible, Equatable {
    /// An LMDB result code (`MDB_NOTFOUND`, `MDB_MAP_FULL`, an `errno` value, ...).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// `MDB_KEYEXIST`: the key/data pair already exists.
        public static let keyExists = Code(rawValue: MDB_KEYEXIST)
        /// `MDB_NOTFOUND`: no matching key/data pair.
        public static let notFound = Code(rawValue: MDB_NOTFOUND)
        /// `MDB_MAP_FULL`: the environment map size is reached.
        public static let mapFull = Code(rawValue: MDB_MAP_FULL)
        /// `MDB_MAP_RESIZED`: another process grew the map beyond this one's mapping.
        public static let mapResized = Code(rawValue: MDB_MAP_RESIZED)
        /// `MDB_READERS_FULL`: the reader lock table is full.
        public static let readersFull = Code(rawValue: MDB_READERS_FULL)
        /// `MDB_DBS_FULL`: too many named databases.
        public static let databasesFull = Code(rawValue: MDB_DBS_FULL)
        /// `MDB_BAD_VALSIZE`: a key or value has an unsupported size.
        public static let badValueSize = Code(rawValue: MDB_BAD_VALSIZE)
        /// `MDB_INVALID`: the file is not an LMDB file.
        public static let invalid = Code(rawValue: MDB_INVALID)
        /// `MDB_VERSION_MISMATCH`: the file was written by an incompatible LMDB version.
        public static let versionMismatch = Code(rawValue: MDB_VERSION_MISMATCH)
        /// `MDB_CORRUPTED`: a page of the file does not have the expected form.
        public static let corrupted = Code(rawValue: MDB_CORRUPTED)
        /// `MDB_PAGE_NOTFOUND`: a page the tree points to is not in the file.
        public static let pageNotFound = Code(rawValue: MDB_PAGE_NOTFOUND)

        /// `EBUSY`: another process holds what this one needs (a read-only open that cannot
        /// take a place in the lock table while a writer may run).
        public static let busy = Code(rawValue: EBUSY)

        public var description: String { String(cString: mdb_strerror(rawValue)) }
    }

    /// The LMDB result code.
    public let code: Code
    /// The LMDB call that failed, for messages (`mdb_put`, `mdb_env_open`, ...).
    public let operation: String

    public var description: String { "\(operation): \(code) (\(code.rawValue))" }

    /// Throws an ``LMDBError`` when `result` is not `MDB_SUCCESS`.
    @inline(__always)
    static func check(_ result: Int32, _ operation: @autoclosure () -> String) throws {
        if result != 0 { throw LMDBError(code: Code(rawValue: result), operation: operation()) }
    }
}
