#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// This process's sole use of an environment: a write lock on the first byte of its
/// `lock.mdb`, the byte on which every process that has the environment open holds a shared
/// lock (LMDB's own rule). Taken only while no other process has the environment open, and
/// while held, a process opening it waits in `mdb_env_open` before it opens the data file.
///
/// Open the environment meanwhile only with ``Environment/Options/withoutLocks``: LMDB's own
/// use of `lock.mdb` would change this process's lock, and closing it would drop it (POSIX
/// drops every lock a process holds on a file when any of its descriptors for it closes).
public final class SoleUse {
    private var descriptor: Int32

    /// Takes sole use of the environment in `path`; throws ``LMDBError/Code/busy`` naming the
    /// process that has it open.
    public init(of path: String) throws {
        let lockFile = path + "/lock.mdb"
        descriptor = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw LMDBError(code: .init(rawValue: errno), operation: "open(\(lockFile))") }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        guard fcntl(descriptor, F_SETLK, &lock) == 0 else {
            let failure = errno
            let holder = (try? LockFileProbe.holder(of: descriptor)).flatMap { $0 }.map { "process \($0)" } ?? "another process"
            close(descriptor)
            guard failure == EAGAIN || failure == EACCES else {
                throw LMDBError(code: .init(rawValue: failure), operation: "fcntl(\(lockFile), F_SETLK)")
            }
            throw LMDBError(code: .busy, operation: "\(holder) has \(path) open")
        }
    }

    /// Marks the lock table as not set up (its first four bytes, LMDB's magic number, zeroed),
    /// before the data file is replaced. A process that was waiting to open the environment
    /// meanwhile may hold the old data file open (a read-only `mdb_env_open` opens it before
    /// taking its lock) and would read it through the new file's transaction numbers; instead
    /// its open fails with `MDB_INVALID`, and ``Environment/init(path:options:)`` opens again,
    /// the new file this time. The first process to open alone sets the table up again.
    public func invalidateLockTable() throws {
        let zeros = [UInt8](repeating: 0, count: 4)
        guard zeros.withUnsafeBytes({ pwrite(descriptor, $0.baseAddress, 4, 0) }) == 4, fsync(descriptor) == 0 else {
            throw LMDBError(code: .init(rawValue: errno), operation: "pwrite(lock.mdb)")
        }
    }

    /// Whether the lock table in `path` is marked not set up (``invalidateLockTable()``).
    static func lockTableInvalidated(in path: String) -> Bool {
        let descriptor = open(path + "/lock.mdb", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var magic: UInt32 = 1
        return pread(descriptor, &magic, 4, 0) == 4 && magic == 0
    }

    /// Lets the environment go (also when this object goes away).
    public func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}

/// Asks which process holds a lock that would conflict with a write lock on the first byte of
/// an environment's `lock.mdb` (LMDB's "environment open" byte).
enum LockFileProbe {
    /// The holder's process ID; nil when no other process holds a lock there.
    static func holder(of descriptor: Int32) throws -> pid_t? {
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 0
        probe.l_len = 1
        guard fcntl(descriptor, F_GETLK, &probe) == 0 else { throw LMDBError(code: .init(rawValue: errno), operation: "fcntl(lock.mdb, F_GETLK)") }
        return probe.l_type == Int16(F_UNLCK) ? nil : probe.l_pid
    }
}
