import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads a file that came from outside (a package, a receipt, a pinned key) without trusting
/// it: only a regular file (not a device, a FIFO or a directory, even behind a symbolic link),
/// and no more than a limit.
public enum FileBytes {
    /// The bytes of the regular file at `path`, refused when larger than `limit` bytes.
    /// Throws a ``FileError`` naming the file.
    public static func read(_ path: String, limit: Int) throws -> [UInt8] {
        try read(Stream(path, limit: limit))
    }

    /// What is left of `stream`, whole.
    private static func read(_ stream: Stream) throws -> [UInt8] {
        let path = stream.path
        var bytes: [UInt8] = []
        bytes.reserveCapacity(stream.size)
        while bytes.count < stream.size {
            guard try stream.read(upTo: stream.size - bytes.count, appendingTo: &bytes) > 0 else {
                throw FileError(.unreadable, "\(path) could not be read whole (it changed while read?)")
            }
        }
        return bytes
    }

    /// The bytes of a file the operator names to be read once (a checkpoint, a key, a list): a
    /// regular file, or a pipe (a shell's process substitution `<(…)`, a FIFO), or standard input
    /// for `-`, read to its end. Refused when larger than `limit` bytes, and when a directory or
    /// a device. Throws a ``FileError`` naming the file.
    public static func readOnce(_ path: String, limit: Int) throws -> [UInt8] {
        func kind(_ status: stat) -> mode_t { status.st_mode & S_IFMT }
        func isReadable(_ status: stat) -> Bool { [S_IFREG, S_IFIFO, S_IFSOCK].contains(kind(status)) }
        var status = stat()
        // Looked at before it is opened, so that a device or a directory is never opened; a
        // pipe is opened once, blocking, as its writer expects.
        if path != "-" {
            guard stat(path, &status) == 0 else {
                throw FileError(.unreadable, "\(path) is missing or cannot be read (\(String(cString: strerror(errno))))", errno: errno)
            }
            guard isReadable(status) else { throw FileError(.unreadable, "\(path) is not a file or a pipe") }
        }
        let fd = path == "-" ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw FileError(.unreadable, "\(path) is missing or cannot be read (\(String(cString: strerror(errno))))", errno: errno)
        }
        defer { close(fd) }
        guard fstat(fd, &status) == 0 else { throw FileError(.unreadable, "\(path) cannot be read (\(String(cString: strerror(errno))))") }
        guard isReadable(status) else { throw FileError(.unreadable, "\(path) is not a file or a pipe") }
        guard kind(status) != S_IFREG || status.st_size <= limit else { throw FileError(.tooLarge, "\(path) is larger than \(limit) bytes") }
        var bytes: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = block.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw FileError(.unreadable, "\(path) could not be read (\(String(cString: strerror(errno))))", errno: errno) }
            if n == 0 { return bytes }
            bytes += block[..<n]
            guard bytes.count <= limit else { throw FileError(.tooLarge, "\(path) is larger than \(limit) bytes") }
        }
    }

    /// Writes the regular file at `path` to `output`, a block at a time.
    public static func copy(_ path: String, to output: FileHandle) throws {
        let stream = try Stream(path, limit: Int.max)
        var block: [UInt8] = []
        block.reserveCapacity(1 << 20)
        while try stream.read(upTo: 1 << 20, appendingTo: &block) > 0 {
            try output.write(contentsOf: block)
            block.removeAll(keepingCapacity: true)
        }
    }

    /// ``read(_:limit:)``, or nil when nothing is at `path`.
    public static func readIfPresent(_ path: String, limit: Int) throws -> [UInt8]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try read(path, limit: limit)
    }

    /// A regular file of at most a limit, opened and read block by block: what reads a file
    /// too large to hold whole in bounded memory. Closed when the last copy is released.
    public final class Stream {
        public let path: String
        /// The file's size when it was opened.
        public let size: Int
        private let fd: Int32

        /// Opens the regular file at `path`, refused when larger than `limit` bytes. Throws a
        /// ``FileError`` naming the file.
        public init(_ path: String, limit: Int) throws {
            // Non-blocking, so a FIFO put in a file's place cannot hang the open.
            let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else {
                throw FileError(.unreadable, "\(path) is missing or cannot be read (\(String(cString: strerror(errno))))", errno: errno)
            }
            var status = stat()
            guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
                close(fd)
                throw FileError(.unreadable, "\(path) is not a regular file")
            }
            guard status.st_size <= limit else {
                close(fd)
                throw FileError(.tooLarge, "\(path) is larger than \(limit) bytes")
            }
            self.path = path
            self.size = Int(status.st_size)
            self.fd = fd
        }

        deinit { close(fd) }

        /// Appends up to `count` of the next bytes to `buffer`; returns how many, 0 at the end.
        public func read(upTo count: Int, appendingTo buffer: inout [UInt8]) throws -> Int {
            // Read into a block of our own and copy what came: growing the array by `count`
            // zeros and cutting it back costs more than the read when the file is small.
            let block = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(count, 1))
            defer { block.deallocate() }
            while true {
                let n = Glibc.read(fd, block.baseAddress!, count)
                if n < 0, errno == EINTR { continue }
                guard n >= 0 else {
                    throw FileError(.unreadable, "\(path) could not be read (\(String(cString: strerror(errno))))", errno: errno)
                }
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: block[..<n]))
                return n
            }
        }
    }
}
