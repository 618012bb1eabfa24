import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Replaces a file whole: the bytes go to a temporary file beside it, flushed to disk, then
/// renamed over it, so a reader sees the old file or the new one, never half of either, and a
/// crash leaves the old one. The one temp-file-then-rename of the project.
public enum AtomicFile {
    /// Writes `contents` to `path` with permissions `mode` (nil: 0666 less the umask); throws a
    /// ``FileError`` naming the file.
    public static func write(_ contents: [UInt8], to path: String, mode: mode_t?) throws {
        let writer = try Writer(replacing: path, mode: mode)
        try writer.write(contents)
        try writer.commit()
    }

    /// A replacement written in parts as it is made (an answer too large to hold), then
    /// committed; dropped without a commit, it leaves the old file and no temporary one.
    public final class Writer {
        /// The file replaced.
        public let path: String
        /// Where the new file is written before it is renamed over ``path``.
        public let temporary: String
        private let mode: mode_t?
        private var fd: Int32
        private var offset = 0

        /// Starts a replacement of `path`, to have permissions `mode` (nil: 0666 less the umask),
        /// written first to `temporary` (by default beside it), which must be on the same file
        /// system.
        public init(replacing path: String, mode: mode_t?, temporary: String? = nil) throws {
            self.path = path
            self.mode = mode
            let temporary = temporary ?? path + ".tmp-\(getpid())"
            self.temporary = temporary
            fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode ?? 0o666)
            guard fd >= 0 else { throw AtomicFile.failure("open", temporary) }
        }

        /// Appends `bytes`.
        public func write(_ bytes: [UInt8]) throws {
            precondition(fd >= 0, "AtomicFile.Writer used after commit or failure")
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + written, $0.count - written, off_t(offset + written)) }
                guard n > 0 else { throw abandon("write") }
                written += n
            }
            offset += written
        }

        /// Flushes the new file to disk and renames it over ``path``.
        public func commit() throws {
            precondition(fd >= 0, "AtomicFile.Writer committed twice or after a failure")
            // The mode asked for, whatever the umask took away.
            if let mode, fchmod(fd, mode) != 0 { throw abandon("fchmod") }
            guard fsync(fd) == 0 else { throw abandon("fsync") }
            close(fd)
            fd = -1
            guard rename(temporary, path) == 0 else {
                let error = AtomicFile.failure("rename to \(path)", temporary)
                unlink(temporary)
                throw error
            }
        }

        /// Closes the new file at ``temporary``, neither flushed nor renamed: for a caller that
        /// writes many files, flushes them all at once and then renames each.
        public func stage() throws {
            precondition(fd >= 0, "AtomicFile.Writer staged twice or after a failure")
            if let mode, fchmod(fd, mode) != 0 { throw abandon("fchmod") }
            close(fd)
            fd = -1
        }

        deinit {
            if fd >= 0 {
                close(fd)
                unlink(temporary)
            }
        }

        private func abandon(_ call: String) -> FileError {
            let error = AtomicFile.failure(call, temporary)
            close(fd)
            fd = -1
            unlink(temporary)
            return error
        }
    }

    private static func failure(_ call: String, _ path: String) -> FileError {
        FileError(.unwritable, "\(call)(\(path)): \(String(cString: strerror(errno)))", errno: errno)
    }
}
