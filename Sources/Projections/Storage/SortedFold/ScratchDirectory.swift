import Foundation
import Ledger
import LogEngine

#if canImport(Glibc)
import Glibc
#endif

/// A directory a fold works in outside the ledger (its working state and sorted runs), made
/// new and removed after use. It holds a lock file for as long as its process uses it, so a
/// directory left behind by a process that was killed is recognised by the next fold (its lock
/// is free: the kernel released it) and removed.
public final class ScratchDirectory {
    /// The directory's path.
    let path: String
    /// The open lock file: holding it marks the directory in use.
    private var lock: Int32

    /// The lock file's name inside a scratch directory.
    static let lockName = "handover-scratch.lock"
    /// How the default scratch directories in the temporary directory begin.
    static let prefix = "handover-"

    /// A new directory's path in the temporary directory, for a fold made for `purpose`.
    static func temporaryPath(for purpose: String) -> String {
        NSTemporaryDirectory() + prefix + purpose + "-" + UUID().uuidString
    }

    /// A new scratch directory in the temporary directory, for `purpose` (mode 0700), those
    /// killed processes left behind removed first: for work outside the ledger, such as an
    /// export written whole before it is streamed.
    public static func temporary(for purpose: String) throws -> ScratchDirectory {
        sweepAbandoned()
        return try ScratchDirectory(path: temporaryPath(for: purpose))
    }

    /// Makes the directory `path` and takes its lock. A directory already there is refused,
    /// unless it is a scratch directory whose process is gone, which is removed first.
    ///
    /// The directory is made under a name no sweep looks at, locked, then renamed to `path`, so
    /// it never appears unlocked; a rename onto a directory another fold made meanwhile fails.
    init(path: String) throws {
        let fm = FileManager.default
        if fm.fileExists(atPath: path) {
            guard ScratchDirectory.isAbandoned(path) else {
                throw LedgerError(.file, "the scratch directory \(path) exists; give a new one")
            }
            try fm.removeItem(atPath: path)
        }
        let parent = (path as NSString).deletingLastPathComponent
        do {
            if !parent.isEmpty { try fm.createDirectory(atPath: parent, withIntermediateDirectories: true) }
        } catch { throw LedgerError(.file, "could not make the directory \(parent) for the scratch directory", underlying: error) }
        let staging = (parent.isEmpty ? "." : parent) + "/.handover-scratch-" + UUID().uuidString
        guard mkdir(staging, 0o700) == 0 else {
            throw LedgerError(.file, "could not make the scratch directory \(path): \(String(cString: strerror(errno)))", errno: errno)
        }
        let descriptor = open(staging + "/" + ScratchDirectory.lockName, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0, rename(staging, path) == 0 else {
            let reason = String(cString: strerror(errno))
            if descriptor >= 0 { close(descriptor) }
            try? fm.removeItem(atPath: staging)
            throw LedgerError(.file, "could not make and lock the scratch directory \(path): \(reason)")
        }
        self.path = path
        self.lock = descriptor
    }

    /// Removes the directory and everything in it, then lets its lock go. Safe to call twice.
    public func remove() {
        guard lock >= 0 else { return }
        try? FileManager.default.removeItem(atPath: path)
        close(lock)
        lock = -1
    }

    deinit { remove() }

    /// A file's path inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Whether `path` is a scratch directory nobody uses: it holds the lock file, and the lock
    /// is free.
    public static func isAbandoned(_ path: String) -> Bool {
        let descriptor = open(path + "/" + lockName, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return flock(descriptor, LOCK_EX | LOCK_NB) == 0
    }

    /// Removes the scratch directories in the temporary directory that killed processes left
    /// behind; returns how many.
    @discardableResult
    static func sweepAbandoned() -> Int {
        let fm = FileManager.default
        let temporary = NSTemporaryDirectory()
        guard let names = try? fm.contentsOfDirectory(atPath: temporary) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(prefix) {
            let path = temporary + name
            if isAbandoned(path), (try? fm.removeItem(atPath: path)) != nil { removed += 1 }
        }
        return removed
    }
}
