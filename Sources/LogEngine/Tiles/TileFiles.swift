#if canImport(Glibc)
import Basics
import Glibc
#endif

/// The files of a tile directory: each written in `.staging/`, then all flushed and renamed into
/// place, so the tree under `tile/` never holds part of a file, even after a power cut; one
/// writer at a time (a lock on `.lock`).
/// A tile already there is left as it is when it holds the same bytes, and reported when not.
package final class TileFiles {
    package let root: String
    private var staging: String { root + "/.staging" }
    private var lock: Int32 = -1
    private var made: Set<String> = []
    /// Files written in `.staging/`, each with the path it is for.
    private var pending: [(file: String, target: String)] = []

    package init(root: String) {
        self.root = root
    }

    deinit {
        if lock >= 0 { close(lock) }
    }

    /// Makes the directory if it is not there, takes its lock and empties `.staging/` of what a
    /// killed run left.
    package func prepare() throws {
        try makeDirectory(root)
        lock = open(root + "/.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lock >= 0 else { throw FileError(.unwritable, "open(\(root)/.lock): \(String(cString: strerror(errno)))", errno: errno) }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            throw FileError(.unwritable, "\(root) is being written by another `handover tiles`; wait for it to finish", errno: errno)
        }
        try makeDirectory(staging)
        guard let listing = opendir(staging) else {
            throw FileError(.unreadable, "opendir(\(staging)): \(String(cString: strerror(errno)))", errno: errno)
        }
        defer { closedir(listing) }
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { unlink(staging + "/" + name) }
        }
    }

    /// Whether `tile` is in the directory.
    package func exists(_ tile: TileID) -> Bool { access(root + "/" + tile.path, F_OK) == 0 }

    /// Whether `tile` is in the directory holding `bytes`: false when it is not there; a
    /// refusal when it holds other bytes.
    package func holds(_ tile: TileID, _ bytes: ArraySlice<UInt8>) throws -> Bool {
        let target = root + "/" + tile.path
        // A full entry bundle is at most 256 entries of 2 + 65,535 bytes.
        guard let there = try FileBytes.readIfPresent(target, limit: 1 << 25) else { return false }
        guard there.elementsEqual(bytes) else {
            throw TileDirectory.Refusal(
                kind: .doesNotHold,
                description:
                    "\(target) differs from the log's \(tile.path): the directory holds another tree, or the log was changed (run `handover verify`)"
            )
        }
        return true
    }

    /// Stages `bytes` for `tile`'s path; false when the same bytes are there already. Nothing
    /// appears under `tile/` before ``publishStaged()``.
    package func stage(_ tile: TileID, _ bytes: ArraySlice<UInt8>) throws -> Bool {
        if try holds(tile, bytes) { return false }
        let target = root + "/" + tile.path
        let writer = try AtomicFile.Writer(replacing: target, mode: 0o644, temporary: staging + "/\(pending.count)")
        try writer.write(Array(bytes))
        try writer.stage()
        pending.append((writer.temporary, target))
        return true
    }

    /// Puts every staged file at its path: first all of them flushed to disk (one `sync`), so
    /// that no name under `tile/` ever leads to a file that is not whole, even after a power
    /// cut; then renamed into place, and the renames flushed.
    package func publishStaged() throws {
        guard !pending.isEmpty else { return }
        sync()
        for (file, target) in pending {
            try makeDirectory(String(target[..<target.lastIndex(of: "/")!]))
            guard rename(file, target) == 0 else {
                throw FileError(.unwritable, "rename(\(file), \(target)): \(String(cString: strerror(errno)))", errno: errno)
            }
        }
        pending = []
        sync()
    }

    /// Replaces `checkpoint` with `text`, flushed to disk.
    package func replaceCheckpoint(with text: String) throws {
        let writer = try AtomicFile.Writer(replacing: root + "/checkpoint", mode: 0o644, temporary: staging + "/checkpoint")
        try writer.write(Array(text.utf8))
        try writer.commit()
    }

    /// Makes `directory` and the directories above it that are missing.
    private func makeDirectory(_ directory: String) throws {
        guard !made.contains(directory) else { return }
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            guard errno == ENOENT, let slash = directory.lastIndex(of: "/"), slash > directory.startIndex else {
                throw FileError(.unwritable, "mkdir(\(directory)): \(String(cString: strerror(errno)))", errno: errno)
            }
            try makeDirectory(String(directory[..<slash]))
            guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
                throw FileError(.unwritable, "mkdir(\(directory)): \(String(cString: strerror(errno)))", errno: errno)
            }
        }
        made.insert(directory)
    }
}
