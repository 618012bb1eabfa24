import Foundation
import Ledger
import LogEngine

#if canImport(Glibc)
import Glibc
#endif

/// The memory a bulk fold's working state is kept in (``WorkingState``): regions that grow,
/// in this process's memory while they fit the budget together, and past it in files of the
/// scratch directory mapped in its place, which the kernel keeps in the page cache as far as
/// the machine's memory allows and writes to disk beyond. The budget is the fold's
/// (`--fold-memory`); what spills costs disk, and page faults once the page cache no longer
/// holds it.
final class WorkingMemory {
    /// Bytes the regions may take in memory together.
    let budget: Int
    /// Bytes the regions in memory take now.
    private(set) var inMemory = 0
    /// Bytes of the regions spilled to files.
    private(set) var spilled = 0
    /// Where spilled regions' files go.
    private let directory: String
    private var files = 0

    init(budget: Int, directory: String) {
        self.budget = budget
        self.directory = directory
    }

    /// A new region of `capacity` bytes, zeroed.
    func region(capacity: Int) throws -> Region {
        let region = Region(memory: self)
        try region.grow(to: capacity)
        return region
    }

    /// A growable span of zeroed bytes: anonymous memory while the budget allows, then a file
    /// of the scratch directory mapped shared. Its base may move when it grows.
    ///
    /// In memory, a region reserves address space for the whole budget when it is made
    /// (`MAP_NORESERVE`: pages exist only once written), so it grows in place, without a copy
    /// and without holding its old and new bytes at once; where the kernel refuses the
    /// reservation, it grows into a new mapping and copies.
    final class Region {
        private let memory: WorkingMemory
        private(set) var base: UnsafeMutableRawPointer?
        private(set) var capacity = 0
        /// The bytes mapped at `base`: `capacity`, or more in memory.
        private var mappedBytes = 0
        /// The file behind the region once spilled, and its descriptor.
        private var file: (path: String, descriptor: Int32)?

        fileprivate init(memory: WorkingMemory) {
            self.memory = memory
        }

        deinit { release() }

        /// Whether the region is a mapped file of the scratch directory.
        var isSpilled: Bool { file != nil }

        /// Grows the region to at least `size` bytes (its new bytes zeroed), keeping what it
        /// holds: to `preferred` bytes, so that it grows in few steps, or in memory to as much of
        /// them as the budget leaves room for.
        func grow(to size: Int, preferring preferred: Int = 0) throws {
            guard size > capacity else { return }
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            let needed = (size + page - 1) / page * page
            let wanted = max(needed, (preferred + page - 1) / page * page)
            let room = (memory.budget - memory.inMemory + capacity) / page * page
            if file == nil, needed <= room {
                try growInMemory(to: min(wanted, room))
            } else {
                try growInFile(to: wanted)
            }
        }

        /// Grows the region in memory to `size` bytes: in place within its mapping, else into a
        /// new one (the budget reserved, or `size` where the kernel refuses that) with what the
        /// region holds copied in.
        private func growInMemory(to size: Int) throws {
            if size > mappedBytes {
                var length = max(size, memory.budget)
                var fresh = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                if fresh == MAP_FAILED {
                    length = size
                    fresh = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                }
                guard let fresh, fresh != MAP_FAILED else {
                    throw LedgerError(.file, "the fold's working state cannot have \(DiskSpace.format(Int64(size))) of memory", errno: errno)
                }
                // Huge pages where the kernel gives them on request: the fold reads and writes
                // gigabytes at random places, and with 4 KB pages nearly every access misses
                // the TLB as well as the cache. Advice only: without it the region works the same.
                _ = madvise(fresh, length, MADV_HUGEPAGE)
                if let base {
                    fresh.copyMemory(from: base, byteCount: capacity)
                    munmap(base, mappedBytes)
                }
                base = fresh
                mappedBytes = length
            }
            memory.inMemory += size - capacity
            capacity = size
        }

        /// Moves the region into a file of the scratch directory (on first need) and grows it there.
        private func growInFile(to size: Int) throws {
            if file == nil {
                memory.files += 1
                let path = memory.directory + "/working-\(memory.files)"
                let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else { throw LedgerError(.file, "cannot create \(path) for the fold's working state", errno: errno) }
                file = (path, descriptor)
                try truncate(descriptor, path, to: size)
                guard let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
                    throw LedgerError(.file, "cannot map \(path)", errno: errno)
                }
                if let base {
                    mapped.copyMemory(from: base, byteCount: capacity)
                    munmap(base, mappedBytes)
                    memory.inMemory -= capacity
                }
                base = mapped
                mappedBytes = size
                memory.spilled += size
                capacity = size
                return
            }
            guard let (path, descriptor) = file, let base else { return }
            try truncate(descriptor, path, to: size)
            // The file holds what the region held: mapped again, larger.
            munmap(base, mappedBytes)
            guard let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
                self.base = nil
                throw LedgerError(.file, "cannot map \(path) at \(DiskSpace.format(Int64(size)))", errno: errno)
            }
            memory.spilled += size - capacity
            self.base = mapped
            mappedBytes = size
            capacity = size
        }

        /// Grows the file to `size` bytes with its blocks allocated, so that a full disk is an
        /// error here rather than a signal at a later write through the map.
        private func truncate(_ descriptor: Int32, _ path: String, to size: Int) throws {
            let failed = posix_fallocate(descriptor, 0, off_t(size))
            guard failed == 0 else {
                throw LedgerError(failed == ENOSPC ? .diskFull : .file, "cannot grow \(path) to \(DiskSpace.format(Int64(size)))", errno: failed)
            }
        }

        /// Gives the memory (or the file) back.
        func release() {
            if let base { munmap(base, mappedBytes) }
            if let (path, descriptor) = file {
                close(descriptor)
                unlink(path)
                memory.spilled -= capacity
            } else {
                memory.inMemory -= capacity
            }
            base = nil
            capacity = 0
            mappedBytes = 0
            file = nil
        }
    }
}
