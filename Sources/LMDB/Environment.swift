import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open LMDB environment: one memory map, its named databases and its transactions.
///
/// Transactions are lent to closures (``read(_:)`` and ``write(_:)``) and must not escape
/// them, which is LMDB's own rule. Readers use `MDB_NOTLS`, so any thread may read. The map
/// grows by itself: a write that hits `MDB_MAP_FULL` is aborted, the map is enlarged and the
/// whole write closure runs again, so a write closure must be safe to run more than once.
/// When another process has grown the map (`MDB_MAP_RESIZED`) this one adopts the new size.
///
/// `@unchecked Sendable`: every stored property is set at open and never changed; LMDB's
/// handle is safe for any thread's read transactions (`MDB_NOTLS`) and one writer, and
/// `resizeLock` orders a map resize against every open transaction.
public final class Environment: @unchecked Sendable {
    /// Options for opening an environment.
    public struct Options: Sendable {
        /// The initial map size in bytes (the file may be larger, then its size wins).
        public var mapSize: Int = 64 << 20
        /// How many named databases the environment may hold.
        public var maxDatabases: UInt32 = 32
        /// How many concurrent read transactions the lock table allows.
        public var maxReaders: UInt32 = 510
        /// Open without writing: no databases are created and no file is created or changed,
        /// except the reader table in an existing `lock.mdb` this user may write (``ReaderLocks``).
        public var readOnly = false
        /// `MDB_WRITEMAP`: write transactions change the memory map in place, so their dirty
        /// pages are file-backed page cache rather than this process's heap. Every process
        /// writing to one environment must agree on it; read-only opens ignore it.
        public var writeMap = false
        /// Permissions of the files a writable open creates.
        public var fileMode: mode_t = 0o644
        /// `false` sets `MDB_NOSYNC`: commits are not flushed to disk, for scratch data that is
        /// thrown away after use (a crash may lose or corrupt it).
        public var durable = true
        /// `false` sets `MDB_NORDAHEAD`: the kernel reads no pages ahead of those touched, for
        /// a map whose pages are touched at random (a scratch fold whose file is mostly holes).
        public var readAhead = true
        /// No lock table at all (`MDB_NOLOCK`), read-only: only for an environment this process
        /// holds in ``SoleUse``.
        public var withoutLocks = false

        public init(mapSize: Int = 64 << 20, maxDatabases: UInt32 = 32, readOnly: Bool = false, writeMap: Bool = false, fileMode: mode_t = 0o644) {
            self.fileMode = fileMode
            self.mapSize = mapSize
            self.maxDatabases = maxDatabases
            self.readOnly = readOnly
            self.writeMap = writeMap
        }
    }

    let env: OpaquePointer
    /// Held shared by every transaction, exclusively while the map is resized: LMDB allows
    /// `mdb_env_set_mapsize` only when this process has no transaction open.
    private let resizeLock: UnsafeMutablePointer<pthread_rwlock_t>
    /// The directory the environment lives in.
    public let path: String
    /// Whether the environment was opened read-only.
    public let isReadOnly: Bool
    /// How this environment's readers share it with writers.
    public let readerLocks: ReaderLocks
    /// How many stale reader slots were cleared at open (readers of processes that died).
    public let staleReadersCleared: Int

    /// Records every write for replay by the benchmark; nil in normal operation.
    @_spi(Benchmark) nonisolated(unsafe) public var recorder: WriteRecorder?

    /// Opens (creating when writable) the environment in directory `path`.
    ///
    /// A lock table marked not set up (``SoleUse/invalidateLockTable()``: the data file was
    /// just replaced) refuses the open with `MDB_INVALID` when this process is not alone; the
    /// open is then tried again, with the new data file, until a process alone sets the table up.
    public convenience init(path: String, options: Options = Options()) throws {
        var attempt = 0
        while true {
            do {
                try self.init(opening: path, options: options)
                return
            } catch let error as LMDBError where error.code.rawValue == MDB_INVALID && attempt < 100 && SoleUse.lockTableInvalidated(in: path) {
                attempt += 1
                usleep(20_000)
            }
        }
    }

    private init(opening path: String, options: Options) throws {
        var handle: OpaquePointer?
        try LMDBError.check(mdb_env_create(&handle), "mdb_env_create")
        guard let handle else { throw LMDBError(code: .invalid, operation: "mdb_env_create") }
        do {
            try LMDBError.check(mdb_env_set_maxdbs(handle, options.maxDatabases), "mdb_env_set_maxdbs")
            try LMDBError.check(mdb_env_set_maxreaders(handle, options.maxReaders), "mdb_env_set_maxreaders")
            try LMDBError.check(mdb_env_set_mapsize(handle, options.mapSize), "mdb_env_set_mapsize")
            var flags = UInt32(MDB_NOTLS)
            let locks = options.withoutLocks ? .none : options.readOnly ? try ReaderLocks.choose(for: path) : .lockTable
            precondition(!options.withoutLocks || options.readOnly, "an environment opened without locks is read-only")
            if options.readOnly { flags |= UInt32(MDB_RDONLY) } else if options.writeMap { flags |= UInt32(MDB_WRITEMAP) }
            if locks == .none { flags |= UInt32(MDB_NOLOCK) }
            if !options.durable { flags |= UInt32(MDB_NOSYNC) }
            if !options.readAhead { flags |= UInt32(MDB_NORDAHEAD) }
            try LMDBError.check(mdb_env_open(handle, path, flags, options.fileMode), "mdb_env_open(\(path))")
            self.readerLocks = locks
            var dead: Int32 = 0
            try LMDBError.check(mdb_reader_check(handle, &dead), "mdb_reader_check")
            self.staleReadersCleared = Int(dead)
        } catch {
            mdb_env_close(handle)
            throw error
        }
        self.env = handle
        self.path = path
        self.isReadOnly = options.readOnly
        self.resizeLock = .allocate(capacity: 1)
        pthread_rwlock_init(resizeLock, nil)
    }

    deinit {
        mdb_env_close(env)
        pthread_rwlock_destroy(resizeLock)
        resizeLock.deallocate()
    }

    /// The current map size in bytes.
    public var mapSize: Int {
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        return info.me_mapsize
    }

    /// The bytes up to the last page in use (free pages below it included): what a copy of the
    /// environment takes at most.
    public var usedBytes: Int {
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        var stat = MDB_stat()
        mdb_env_stat(env, &stat)
        return (info.me_last_pgno + 1) * Int(stat.ms_psize)
    }

    /// Writes a consistent copy of the environment, as one read transaction sees it, to
    /// `data.mdb` in the existing directory `directory`, and flushes it to disk. With
    /// `compact`, free pages are left out (and with them any bytes they still hold).
    public func copy(to directory: String, compact: Bool) throws {
        while true {
            pthread_rwlock_rdlock(resizeLock)
            let result = mdb_env_copy2(env, directory, compact ? UInt32(MDB_CP_COMPACT) : 0)
            pthread_rwlock_unlock(resizeLock)
            if result == MDB_MAP_RESIZED {
                try withExclusiveAccess { try LMDBError.check(mdb_env_set_mapsize(env, 0), "mdb_env_set_mapsize(0)") }
                continue
            }
            try LMDBError.check(result, "mdb_env_copy2(\(directory))")
            break
        }
        let fd = open(directory + "/data.mdb", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LMDBError(code: .init(rawValue: errno), operation: "open(\(directory)/data.mdb)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw LMDBError(code: .init(rawValue: errno), operation: "fsync(\(directory)/data.mdb)") }
    }

    /// Opens (creating it when the environment is writable) the named database `name`.
    public func database(_ name: String, flags: Database.Flags = []) throws -> Database {
        if isReadOnly {
            return try read { txn in try txn.openDatabase(name, flags: flags, create: false) }
        }
        return try write { txn in try txn.openDatabase(name, flags: flags, create: true) }
    }

    /// Runs `body` in a short read-only transaction that ends when `body` returns.
    public func read<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        let handle = try begin(flags: UInt32(MDB_RDONLY))
        defer { pthread_rwlock_unlock(resizeLock) }
        let txn = ReadTransaction(handle)
        defer {
            txn.invalidate()
            // Commit, not abort: it ends a read transaction the same way but keeps any
            // database handle opened inside it (an abort closes them).
            mdb_txn_commit(handle)
        }
        return try body(txn)
    }

    /// Runs `body` in a write transaction and commits it durably (fsync) when `body`
    /// returns; aborts it when `body` throws.
    ///
    /// On `MDB_MAP_FULL` the transaction is aborted, the map grows and `body` runs again.
    public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        while true {
            let handle = try begin(flags: 0)
            let txn = WriteTransaction(handle)
            txn.record(to: recorder)
            let outcome: Result<T, Error>
            do {
                let value = try body(txn)
                txn.invalidate()
                try LMDBError.check(mdb_txn_commit(handle), "mdb_txn_commit")
                recorder?.commit()
                outcome = .success(value)
            } catch {
                if txn.isValid {
                    txn.invalidate()
                    mdb_txn_abort(handle)
                }
                outcome = .failure(error)
            }
            pthread_rwlock_unlock(resizeLock)
            if case .failure(let error as LMDBError) = outcome, error.code == .mapFull {
                recorder?.abort()
                try grow()
                continue
            }
            return try outcome.get()
        }
    }

    /// Begins a transaction with the resize lock held shared; adopts another process's map
    /// growth when LMDB reports `MDB_MAP_RESIZED`.
    private func begin(flags: UInt32) throws -> OpaquePointer {
        while true {
            pthread_rwlock_rdlock(resizeLock)
            var handle: OpaquePointer?
            let result = mdb_txn_begin(env, nil, flags, &handle)
            if result == 0, let handle { return handle }
            pthread_rwlock_unlock(resizeLock)
            if result == MDB_MAP_RESIZED {
                try withExclusiveAccess {
                    try LMDBError.check(mdb_env_set_mapsize(env, 0), "mdb_env_set_mapsize(0)")
                }
                continue
            }
            try LMDBError.check(result, "mdb_txn_begin")
        }
    }

    /// Enlarges the map: doubles it up to 1 GiB, then adds 1 GiB at a time.
    private func grow() throws {
        try withExclusiveAccess {
            let current = mapSize
            let next = current < (1 << 30) ? current * 2 : current + (1 << 30)
            try LMDBError.check(mdb_env_set_mapsize(env, next), "mdb_env_set_mapsize(\(next))")
        }
    }

    private func withExclusiveAccess(_ body: () throws -> Void) throws {
        pthread_rwlock_wrlock(resizeLock)
        defer { pthread_rwlock_unlock(resizeLock) }
        try body()
    }
}
