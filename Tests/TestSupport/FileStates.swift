import Crypto
import Foundation

/// One file or directory as a reader could change it: content digest (files), size, mode and
/// modification time to the nanosecond.
public struct FileState: Equatable, Sendable, CustomStringConvertible {
    public let sha256: String?
    public let size: Int64
    public let mode: UInt32
    public let modified: timespec

    public static func == (a: FileState, b: FileState) -> Bool {
        a.sha256 == b.sha256 && a.size == b.size && a.mode == b.mode && a.modified.tv_sec == b.modified.tv_sec
            && a.modified.tv_nsec == b.modified.tv_nsec
    }

    public var description: String {
        "\(sha256.map { String($0.prefix(12)) } ?? "dir") \(size) B mode \(String(mode & 0o7777, radix: 8)) mtime \(modified.tv_sec).\(modified.tv_nsec)"
    }
}

/// Every file and directory under `directory` (itself included, as ""), by relative path: to
/// show that a command created, removed or changed none of them.
public func fileStates(_ directory: String) throws -> [String: FileState] {
    var states: [String: FileState] = [:]
    let names = [""] + (FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? [])
    for name in names {
        let path = name.isEmpty ? directory : directory + "/" + name
        var info = stat()
        guard lstat(path, &info) == 0 else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
        let isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
        var digest: String?
        if !isDirectory {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CocoaError(.fileReadNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
            digest = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
        }
        states[name] = FileState(sha256: digest, size: Int64(info.st_size), mode: info.st_mode, modified: info.st_mtim)
    }
    return states
}
