import CLMDB

/// A named database inside an ``Environment``: a handle valid for the environment's lifetime.
public struct Database: Sendable, Hashable {
    /// Flags a database is created with.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// `MDB_DUPSORT`: several sorted values per key.
        public static let duplicateSort = Flags(rawValue: UInt32(MDB_DUPSORT))
        /// `MDB_DUPFIXED`: with `duplicateSort`, all values of a key have one size.
        public static let duplicateFixed = Flags(rawValue: UInt32(MDB_DUPFIXED))
    }

    let handle: MDB_dbi
    /// The database's name in the environment.
    public let name: String
    /// The flags it was opened with.
    public let flags: Flags
}

/// Flags for ``WriteTransaction/put(_:key:value:flags:)``.
public struct PutFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `MDB_NOOVERWRITE`: fail with `keyExists` instead of replacing a value.
    public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    /// `MDB_APPEND`: the key sorts after every key in the database (fast bulk load).
    public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
    /// `MDB_NODUPDATA`: with `duplicateSort`, fail if the key/value pair exists.
    public static let noDuplicateData = PutFlags(rawValue: UInt32(MDB_NODUPDATA))
    /// `MDB_APPENDDUP`: with `duplicateSort`, the value sorts after every value of its key.
    public static let appendDuplicate = PutFlags(rawValue: UInt32(MDB_APPENDDUP))
}
