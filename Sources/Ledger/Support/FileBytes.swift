import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a file that came from outside (a package, a receipt, a pinned key) without trusting
/// it: only a regular file (not a device, a FIFO or a directory, even behind a symbolic link),
/// and no more than a limit.
public enum FileBytes {
    /// The bytes of the regular file at `path`, refused when larger than `limit` bytes.
    /// Throws a ``LedgerError`` naming the file.
    public static func read(_ path: String, limit: Int) throws -> [UInt8] {
        // Non-blocking, so a FIFO put in a file's place cannot hang the open.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw LedgerError(.file, "\(path) is missing or cannot be read (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { throw LedgerError(.file, "\(path) is not a regular file") }
        guard status.st_size <= limit else { throw LedgerError(.malformedRecord, "\(path) is larger than \(limit) bytes") }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw LedgerError(.file, "\(path) could not be read whole (it changed while read?)") }
            done += n
        }
        return bytes
    }

    /// ``read(_:limit:)``, or nil when nothing is at `path`.
    public static func readIfPresent(_ path: String, limit: Int) throws -> [UInt8]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try read(path, limit: limit)
    }
}
