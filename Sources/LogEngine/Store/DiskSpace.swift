import Basics
import Foundation
import LMDB

#if canImport(Glibc)
import Glibc
#endif

/// Free space on the filesystem holding a path, and what a failed write there means.
public struct DiskSpace: Sendable, CustomStringConvertible {
    /// Bytes an unprivileged writer may still use.
    public var available: Int64
    /// The filesystem's size in bytes.
    public var total: Int64

    /// The filesystem holding `path`; nil when it cannot be asked.
    public init?(at path: String) {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        available = Int64(info.f_bavail) * Int64(info.f_frsize)
        total = Int64(info.f_blocks) * Int64(info.f_frsize)
    }

    /// Below this much free space a failed write is taken for a full disk.
    public static let nearlyFull: Int64 = 4 << 20

    public var description: String { "\(DiskSpace.format(available)) free of \(DiskSpace.format(total))" }

    /// `bytes` for people: 812 KB, 3.4 MB, 12.0 GB.
    public static func format(_ bytes: Int64) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) bytes" : String(format: "%.1f %@", value, units[unit])
    }

    /// Whether `error` is a write refused for lack of room: `ENOSPC`, `EDQUOT`, LMDB's
    /// `MDB_MAP_FULL` (the map could not grow), or `EIO` (LMDB reports a short write that way)
    /// on a disk that is nearly full.
    public static func isOutOfSpace(_ error: any Error, at path: String) -> Bool {
        let code: Int32
        switch error {
        case let error as LMDBError: code = error.code.rawValue
        case let error as LedgerError where error.code == .diskFull: return true
        case let error as LedgerError where error.code == .file: code = error.errno ?? 0
        case let error as FileError: code = error.errno ?? 0
        default: return false
        }
        if code == ENOSPC || code == EDQUOT || code == LMDBError.Code.mapFull.rawValue { return true }
        return code == EIO && (DiskSpace(at: path).map { $0.available < nearlyFull } ?? false)
    }
}

extension LedgerError {
    /// The error a write that found no room becomes: what is full, how much is free, and
    /// that nothing already acknowledged was lost.
    public static func diskFull(at directory: String, cause: any Error) -> LedgerError {
        let space = DiskSpace(at: directory).map { " (\($0))" } ?? ""
        return LedgerError(
            .diskFull,
            "the disk holding \(directory) is full\(space): nothing more can be recorded until space is freed. "
                + "Everything already acknowledged is safe: each event was on disk before it was acknowledged, and the failed write changed nothing. "
                + "Free space (or move the ledger to a larger disk), then run the command again. [\(cause)]")
    }

    /// `error` as the caller should see it: a ``diskFull(at:cause:)`` error when it is a
    /// write that found no room on the disk holding `directory`, otherwise unchanged.
    public static func classifyingWrite(_ error: any Error, at directory: String) -> any Error {
        if let error = error as? LedgerError, error.code == .diskFull { return error }
        return DiskSpace.isOutOfSpace(error, at: directory) ? LedgerError.diskFull(at: directory, cause: error) : error
    }
}
