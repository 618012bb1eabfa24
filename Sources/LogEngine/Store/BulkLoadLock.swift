#if canImport(Glibc)
import Glibc
#endif

/// The lock a writable open holds while it loads folders in bulk (`bulk-load.lock` in the
/// ledger directory, `flock`): another writable open waits for that load instead of starting
/// its own, and a load whose process died leaves no lock behind, since the kernel releases it.
package enum BulkLoadLock {
    /// The lock file's name in a ledger directory (made by the first bulk load, empty; not
    /// part of a backup).
    package static let fileName = "bulk-load.lock"

    package static func file(in directory: String) -> String { directory + "/" + fileName }

    /// Runs `body` holding the lock; `waiting` hears first when another process holds it.
    package static func holding<T>(in directory: String, waiting: () -> Void, _ body: () throws -> T) throws -> T {
        let path = file(in: directory)
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("open", path) }
        // Closing the file releases the lock.
        defer { close(descriptor) }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK else { throw failure("flock", path) }
            waiting()
            while flock(descriptor, LOCK_EX) != 0 {
                guard errno == EINTR else { throw failure("flock", path) }
            }
        }
        return try body()
    }

    private static func failure(_ call: String, _ path: String) -> LedgerError {
        LedgerError(.file, "\(call) \(path): \(String(cString: strerror(errno)))")
    }
}
