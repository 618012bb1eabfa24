import Foundation
import LMDB
import LogEngine

#if canImport(Glibc)
import Glibc
#endif

/// Rewrites a ledger's log environment without its free pages, in place: a compacting copy
/// (`mdb_env_copy2` with `MDB_CP_COMPACT`) written beside `data.mdb`, checked, then renamed
/// over it. LMDB never shrinks its file, so this is how a ledger gives back the room a rebuild
/// or an erasure freed.
///
/// Refused while any other process has the ledger open; while it runs, a process opening the
/// ledger waits for it (``SoleUse``). Interrupted at any moment, the ledger is the old file or
/// the new one, never a mix: the copy only replaces `data.mdb` by a rename once it is whole
/// and flushed, and the next compaction removes a copy left unfinished.
public enum LedgerCompaction {
    /// What a compaction did.
    public struct Summary: Sendable {
        /// The log's last event and its chain hash, the same before and after.
        public var head: ChainHead
        /// `data.mdb`'s size before and after.
        public var bytesBefore: Int64
        public var bytesAfter: Int64
    }

    /// How the copies being written are named in the ledger directory.
    static let copyPrefix = "data.mdb.compact.tmp-"

    /// Compacts the ledger in `directory`; `options` say what a refusal of a path holding no
    /// ledger says of it (``Ledger/Options/pathNote``, ``Ledger/Options/alsoNear``).
    public static func run(in directory: String, options: Ledger.Options = Ledger.Options()) throws -> Summary {
        let fm = FileManager.default
        let dataFile = Ledger.dataFile(in: directory)
        guard LedgerLocation.isLedger(directory) else {
            throw LedgerLocation(path: directory, alsoNear: options.alsoNear).refusal(note: options.pathNote)
        }
        let sole: SoleUse
        do { sole = try SoleUse(of: directory) } catch let error as LMDBError where error.code == .busy {
            throw LedgerError(
                .inUse, "\(error.operation): stop it (a run, serve, another command) and compact again; nothing was changed", underlying: error)
        }
        defer { sole.release() }
        for name in try fm.contentsOfDirectory(atPath: directory) where name.hasPrefix(copyPrefix) {
            try fm.removeItem(atPath: directory + "/" + name)
        }
        let before = try size(of: dataFile)
        let copy = directory + "/" + copyPrefix + UUID().uuidString
        try fm.createDirectory(atPath: copy, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? fm.removeItem(atPath: copy) }
        let head = try withoutLocks(directory) { environment in
            let used = Int64(environment.usedBytes)
            if let space = DiskSpace(at: directory), space.available < used {
                throw LedgerError(
                    .diskFull, "a compacted copy of this ledger needs about \(DiskSpace.format(used)) free beside it, and its disk has \(space)")
            }
            let head = try environment.read { txn in try LogView(txn, schema: try LedgerSchema.openEitherFormat(in: txn)).head() }
            try environment.copy(to: copy, compact: true)
            return head
        }
        let copied = try withoutLocks(copy) { environment in
            try environment.read { txn in try LogView(txn, schema: try LedgerSchema.openEitherFormat(in: txn)).head() }
        }
        guard copied == head else {
            throw LedgerError(.file, "the compacted copy ends at event \(copied.sequence), not at \(head.sequence); the ledger was left as it was")
        }
        if let mode = try fm.attributesOfItem(atPath: dataFile)[.posixPermissions] {
            try fm.setAttributes([.posixPermissions: mode], ofItemAtPath: copy + "/data.mdb")
        }
        try sole.invalidateLockTable()
        guard rename(copy + "/data.mdb", dataFile) == 0 else {
            throw LedgerError(.file, "could not rename the compacted copy over \(dataFile): \(String(cString: strerror(errno)))", errno: errno)
        }
        try LedgerBackup.syncFile(directory)
        // The lock table stays marked not set up: the first process to open the ledger alone
        // sets it up for the new file, and one that waited meanwhile opens again
        // (``SoleUse/invalidateLockTable()``).
        return Summary(head: head, bytesBefore: before, bytesAfter: try size(of: dataFile))
    }

    private static func withoutLocks<T>(_ path: String, _ body: (Environment) throws -> T) throws -> T {
        var options = Environment.Options(readOnly: true)
        options.withoutLocks = true
        return try body(try Environment(path: path, options: options))
    }

    private static func size(of path: String) throws -> Int64 {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
    }
}
