import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Replaces a file whole: the bytes go to a temporary file beside it, flushed to disk, then
/// renamed over it, so a reader sees the old file or the new one, never half of either, and a
/// crash leaves the old one.
public enum AtomicFile {
    /// Writes `contents` to `path` with permissions `mode`; throws a ``LedgerError`` (`.file`)
    /// naming the file.
    public static func write(_ contents: [UInt8], to path: String, mode: mode_t) throws {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure("open", temporary) }
        var written = 0
        while written < contents.count {
            let n = contents.withUnsafeBytes { pwrite(fd, $0.baseAddress! + written, $0.count - written, off_t(written)) }
            guard n > 0 else {
                let error = failure("write", temporary)
                close(fd)
                unlink(temporary)
                throw error
            }
            written += n
        }
        // The mode asked for, whatever the umask took away.
        guard fchmod(fd, mode) == 0, fsync(fd) == 0 else {
            let error = failure("fsync", temporary)
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = failure("rename to \(path)", temporary)
            unlink(temporary)
            throw error
        }
    }

    private static func failure(_ call: String, _ path: String) -> LedgerError {
        LedgerError(.file, "\(call)(\(path)): \(String(cString: strerror(errno)))", errno: errno)
    }
}
