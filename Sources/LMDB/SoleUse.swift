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
            var probe = lock
            let holder = fcntl(descriptor, F_GETLK, &probe) == 0 && probe.l_type != Int16(F_UNLCK) ? "process \(probe.l_pid)" : "another process"
            close(descriptor)
            guard failure == EAGAIN || failure == EACCES else {
                throw LMDBError(code: .init(rawValue: failure), operation: "fcntl(\(lockFile), F_SETLK)")
            }
            throw LMDBError(code: .busy, operation: "\(holder) has \(path) open")
        }
    }

    /// Lets the environment go (also when this object goes away).
    public func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
