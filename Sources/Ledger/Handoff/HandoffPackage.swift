import Basics
import Foundation

/// A handoff package as it travels from team A to team B: a directory of three files
/// (schemas/audit-evidence.md, "Handoff package").
///
/// - `rows.csv`: `account_id,transfer_sub,seq,salt` (v1: without `salt`), one row per "transfer
///   ID generated" event listed, `seq` being that event's sequence number in the sender's ledger
///   (``HandoffRowsForm``);
/// - `manifest.txt`: the ``HandoffManifest``, a signed note;
/// - `consistency.txt`: the manifest's checkpoint with a consistency proof from the previous
///   package's, as a ``CheckpointSubmission``.
public struct HandoffPackage: Sendable {
    public static let rowsFile = "rows.csv"
    public static let manifestFile = "manifest.txt"
    public static let consistencyFile = "consistency.txt"
    /// The largest manifest, consistency or receipt file read.
    public static let maximumNoteBytes = 64 * 1024
    /// The largest rows file read: 1 GiB, some 14 million rows (a package is read whole, as a
    /// bare CSV is; more users go in more packages).
    public static let maximumRowsBytes = 1 << 30

    /// The package's directory.
    public let path: String

    public init(path: String) { self.path = path }

    /// Whether `path` is a directory, as a package is (a bare CSV is a file).
    public static func isPackage(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// The path of one of the package's files.
    public func file(_ name: String) -> String { path + "/" + name }

    /// The bytes of one of the package's files, refusing one over `limit` bytes.
    public func read(_ name: String, limit: Int = HandoffPackage.maximumNoteBytes) throws -> [UInt8] { try FileBytes.read(file(name), limit: limit) }
}
