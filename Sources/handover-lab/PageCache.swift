import Foundation

/// The kernel's page cache, emptied between a measurement and its baseline so that neither
/// finds the other's pages already in memory.
enum PageCache {
    /// Flushes dirty pages, then drops clean ones (`/proc/sys/vm/drop_caches`); false when
    /// this process may not (not root, or no such file), and the cache stays as it is.
    static func drop() -> Bool {
        sync()
        guard let handle = FileHandle(forWritingAtPath: "/proc/sys/vm/drop_caches") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("3\n".utf8))) != nil
    }
}
