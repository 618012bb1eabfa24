#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a read-only environment shares its files with writers: through LMDB's lock table, or
/// without any lock, which only a copy nobody writes allows.
public enum ReaderLocks: Sendable, Equatable {
    /// Readers take a slot in LMDB's reader table (`lock.mdb`), so a writer in another process
    /// never reuses a page a read transaction still sees: reads are consistent beside writers.
    /// The only byte written is in `lock.mdb`, never in `data.mdb`.
    case lockTable
    /// `MDB_NOLOCK`: nothing is written at all. Reads are consistent only while no process
    /// writes the environment. Chosen where `lock.mdb` is missing (no process has opened this
    /// copy), cannot be written by this user, or lies on a read-only file system, and only after
    /// checking that no process has the environment open.
    case none

    /// The locks a read-only open of the environment in `path` uses: the lock table where this
    /// user can write an existing `lock.mdb`, else none, refused (`EBUSY`) while another process
    /// has the environment open, since that process may write.
    static func choose(for path: String) throws -> ReaderLocks {
        let lockFile = path + "/lock.mdb"
        let writable = open(lockFile, O_RDWR | O_CLOEXEC)
        if writable >= 0 {
            close(writable)
            return .lockTable
        }
        let readable = open(lockFile, O_RDONLY | O_CLOEXEC)
        guard readable >= 0 else {
            // No lock file: every process that opens an environment creates one, so none has.
            if errno == ENOENT { return .none }
            throw LMDBError(code: .init(rawValue: errno), operation: "open(\(lockFile)) to tell whether a writer has it open")
        }
        defer { close(readable) }
        // Every process with the environment open holds a shared fcntl lock on the lock file's
        // first byte (LMDB's own rule); a write lock we could not take names the holder.
        if let holder = try LockFileProbe.holder(of: readable) {
            throw LMDBError(
                code: .busy,
                operation: "process \(holder) has \(path) open and this user cannot take a place in its lock.mdb, so reading beside it is not safe")
        }
        return .none
    }
}
