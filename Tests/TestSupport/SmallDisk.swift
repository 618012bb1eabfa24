import Foundation

/// A small tmpfs mounted for a test that fills a disk (root, in a container that allows mount).
public enum SmallDisk {
    /// Whether this machine lets a test mount a tmpfs.
    public static let canMount: Bool = {
        let probe = TemporaryDirectory()
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe.path]) else { return false }
        return run("/bin/umount", [probe.path])
    }()

    /// Mounts a tmpfs of `size` (mount's syntax: 24m) at `mountPoint`, made if missing.
    public static func mount(size: String, at mountPoint: String) throws -> Bool {
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        return run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mountPoint])
    }

    /// Unmounts `mountPoint` (lazily: a process still holding a file there does not stop it).
    public static func unmount(_ mountPoint: String) { run("/bin/umount", ["-l", mountPoint]) }

    @discardableResult
    private static func run(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
