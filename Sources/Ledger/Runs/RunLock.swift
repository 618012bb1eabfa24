import Basics
import Foundation
import LogEngine
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The lock a batch run holds for as long as it runs: `runs/NAME.lock` in the ledger directory,
/// `flock(LOCK_EX)` on it, NAME the run's ID (a receive's, `receive-` and its package's
/// manifest digest). `status` tells a run still running (its lock held) from one that stopped
/// without finishing (killed, crashed: the kernel released the lock, the file stays). A run that
/// ends, however, removes its file. Not part of a backup (only the ledger directory's regular
/// files are copied).
///
/// The file holds one JSON line for the person looking: the process, its host, and how many
/// users the run set out to attempt (what `status` counts its ETA from).
public final class RunLock: Sendable {
    /// What a running run wrote into its lock file.
    public struct Holder: Sendable, Equatable {
        /// The process holding the lock.
        public var pid: Int
        /// The host it runs on.
        public var host: String
        /// Users (accounts, rows) the run set out to take, when it knew.
        public var attempting: Int?

        /// This process on this host, by default.
        public init(pid: Int = Int(getpid()), host: String = Actor.currentProcess().host, attempting: Int? = nil) {
            self.pid = pid
            self.host = host
            self.attempting = attempting
        }

        var line: [UInt8] {
            var w = JSONWriter()
            w.beginObject()
            w.field("attempting", attempting)
            w.field("host", host)
            w.field("pid", pid)
            w.endObject()
            return w.bytes + [0x0A]
        }

        init?(line: [UInt8]) {
            guard let members = try? JSONValue.parseObject(untrusted: Array(line.prefix { $0 != 0x0A })),
                case .int(let pid)? = members["pid"], case .string(let host)? = members["host"]
            else { return nil }
            var attempting: Int?
            if case .int(let n)? = members["attempting"] { attempting = Int(n) }
            self.init(pid: Int(pid), host: host, attempting: attempting)
        }
    }

    /// Whether a run's lock is held now, on this host.
    public enum State: Sendable, Equatable {
        /// Held: the run is running, in the process named.
        case held(Holder?)
        /// Not held: the run ended (no file) or stopped without ending (the file left).
        case free
    }

    /// The directory of the lock files, in a ledger directory.
    public static func directory(in ledger: String) -> String { ledger + "/runs" }

    /// The lock file of run `name`.
    static func path(_ name: String, in ledger: String) -> String { directory(in: ledger) + "/" + name + ".lock" }

    /// The lock name of a receive of the package whose manifest has digest `manifestSHA256`.
    public static func receiveName(manifestSHA256: String) -> String { "receive-" + manifestSHA256 }

    private let path: String
    private let descriptor: Mutex<Int32?>

    /// Takes run `name`'s lock in the ledger directory `ledger`, for as long as this object is
    /// kept (``release()``). Another process holding it (the same run, resumed twice at once)
    /// is refused.
    public init(_ name: String, in ledger: String, holder: Holder = Holder()) throws {
        guard !name.isEmpty, name.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (48...57).contains($0) || (97...122).contains($0) }) else {
            throw LedgerError(.file, "a run's lock is named by its ID: \(InertText.forScreen(name)) is not one")
        }
        let directory = Self.directory(in: ledger)
        if mkdir(directory, 0o755) != 0, errno != EEXIST { throw Self.failure("mkdir", directory) }
        path = Self.path(name, in: ledger)
        var fd: Int32 = -1
        // A status looking at this run holds the lock shared for an instant: try a few times.
        var attempts = 0
        while true {
            fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw Self.failure("open", path) }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                // The file locked is the one at the path: a run that ended meanwhile removed
                // its file, and a lock on a removed file would be held by nobody's reckoning.
                var opened = stat()
                var named = stat()
                if fstat(fd, &opened) == 0, stat(path, &named) == 0, opened.st_dev == named.st_dev, opened.st_ino == named.st_ino { break }
                close(fd)
                continue
            }
            let failure = errno
            close(fd)
            attempts += 1
            guard failure == EWOULDBLOCK || failure == EINTR, attempts < 50 else {
                throw LedgerError(.inUse, "run \(name) is running in another process (\(path) is locked); wait for it, or stop it first")
            }
            usleep(20_000)
        }
        let line = holder.line
        guard ftruncate(fd, 0) == 0, line.withUnsafeBytes({ pwrite(fd, $0.baseAddress, $0.count, 0) }) == line.count else {
            close(fd)
            throw Self.failure("write", path)
        }
        descriptor = Mutex(fd)
    }

    /// Ends the run's hold: removes its file, then lets the lock go. Safe to call twice.
    public func release() {
        descriptor.withLock { fd in
            guard let open = fd else { return }
            unlink(path)
            close(open)
            fd = nil
        }
    }

    deinit { release() }

    /// Whether run `name`'s lock is held now by a process on this host. Changes no byte: the
    /// file is opened to read, and locked shared for an instant only if it exists.
    public static func state(of name: String, in ledger: String) -> State {
        let path = path(name, in: ledger)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .free }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return .free
        }
        guard errno == EWOULDBLOCK else { return .free }
        var bytes = [UInt8](repeating: 0, count: 512)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return .held(n > 0 ? Holder(line: Array(bytes.prefix(n))) : nil)
    }

    private static func failure(_ call: String, _ path: String) -> LedgerError {
        LedgerError(.file, "\(call) \(path): \(String(cString: strerror(errno)))")
    }
}
