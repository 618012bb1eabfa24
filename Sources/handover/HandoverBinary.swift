import Foundation

/// The running `handover` binary: where it is, and whether typing `handover` runs it.
struct HandoverBinary {
    /// The binary's absolute path.
    let path: String
    /// The directory holding it.
    var directory: String { path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "." }
    /// Whether the first `handover` on `$PATH` is this binary.
    let isOnPath: Bool

    static var current: HandoverBinary {
        let running = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let me = URL(fileURLWithPath: running).resolvingSymlinksInPath().path
        // As it was called (`.build/debug/handover`, not the directory that link points to), made absolute.
        let called = CommandLine.arguments[0]
        let path =
            called.contains("/") && URL(fileURLWithPath: called).resolvingSymlinksInPath().path == me
            ? URL(fileURLWithPath: called).standardizedFileURL.path : me
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        let first = directories.lazy.map { $0 + "/handover" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        return HandoverBinary(path: path, isOnPath: first.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path == me } ?? false)
    }
}
