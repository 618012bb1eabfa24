import Foundation
import LMDB
import LogEngine

/// A consistent copy of a ledger taken while other processes go on writing to it: the log
/// environment as of one transaction, compacted; the key store (unless left out) copied after
/// it, so every data key the copied log names is in the copy unless it was destroyed in
/// between; and the other files at the top of the ledger directory (the checkpoint key, the
/// sign-in secret's hash) with their modes. The copy is built beside the target and renamed
/// into place at the end, so a directory at the target is always a complete copy.
public enum LedgerBackup {
    /// What a backup holds.
    public struct Summary: Sendable {
        /// The copy's last event and its chain hash.
        public var head: ChainHead
        /// Size of the copied log environment.
        public var logBytes: Int64
        /// Data keys in the copy; nil when the key store was left out.
        public var keys: Int?
        /// The other files copied (names).
        public var files: [String]
    }

    /// Copies `ledger` to `target`, which must not exist yet. Without `includeKeys` the copy holds
    /// no private key (no key store, no `checkpoint.key`) but the verifier key: it verifies and
    /// proves, cannot sign, and its personal data can never be opened.
    public static func take(of ledger: Ledger, to target: String, includeKeys: Bool) throws -> Summary {
        let fm = FileManager.default
        let target = (target as NSString).standardizingPath
        if fm.fileExists(atPath: target) {
            let contents: [String]
            do { contents = try fm.contentsOfDirectory(atPath: target) } catch {
                throw LedgerError(
                    .ledgerExists, "\(target) exists and is not a directory this user can read; a backup goes to a new directory", underlying: error)
            }
            guard contents.isEmpty else { throw LedgerError(.ledgerExists, "\(target) exists and is not empty; a backup goes to a new directory") }
            try fm.removeItem(atPath: target)
        }
        let partial = target + ".incomplete"
        if fm.fileExists(atPath: partial) { try fm.removeItem(atPath: partial) }
        try fm.createDirectory(atPath: partial, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try ledger.environment.copy(to: partial, compact: true)
        let keys = includeKeys ? try ledger.sealer.requireKeyStore().copy(to: Ledger.keyStoreDirectory(in: partial)) : nil
        // The copy's lock file is not part of a backup; there may be none to remove.
        try? fm.removeItem(atPath: Ledger.keyStoreDirectory(in: partial) + "/lock.mdb")
        var files: [String] = []
        // Lock files are not part of a backup, and a copy without keys holds no private key: not
        // the signing key either.
        let left = ["data.mdb", "lock.mdb", BulkLoadLock.fileName] + (includeKeys ? [] : [CheckpointKey.fileName])
        for name in try fm.contentsOfDirectory(atPath: ledger.directory).sorted() where !left.contains(name) && !name.contains(".tmp-") {
            let source = ledger.directory + "/" + name
            let attributes = try fm.attributesOfItem(atPath: source)
            guard attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            // Copied, not read whole: a file of any size beside the ledger is carried as it is.
            let destination = partial + "/" + name
            do {
                try fm.copyItem(atPath: source, toPath: destination)
                try fm.setAttributes([.posixPermissions: attributes[.posixPermissions] ?? 0o600], ofItemAtPath: destination)
            } catch { throw LedgerError(.file, "could not copy \(source) to \(destination)", underlying: error) }
            try syncFile(destination)
            files.append(name)
        }
        // A ledger not yet upgraded has no checkpoint.pub: a copy without keys gets one, so it proves.
        if !includeKeys, try Ledger.writeVerifierKeyIfMissing(in: ledger.directory, into: partial, origin: ledger.origin()) {
            files.append(VerifierKeyFile.fileName)
        }
        let head = try Environment(path: partial, options: .init(readOnly: true)).read { txn in
            try LogView(txn, schema: try LedgerSchema.openEitherFormat(in: txn)).head()
        }
        // The copy's lock file is not part of a backup; there may be none to remove.
        try? fm.removeItem(atPath: partial + "/lock.mdb")
        guard rename(partial, target) == 0 else {
            throw LedgerError(.file, "could not rename \(partial) to \(target): \(String(cString: strerror(errno)))")
        }
        // A name with no directory part lives in the current directory.
        let parent = (target as NSString).deletingLastPathComponent
        try syncFile(parent.isEmpty ? "." : parent)
        let logBytes = (try fm.attributesOfItem(atPath: Ledger.dataFile(in: target))[.size] as? NSNumber)?.int64Value ?? 0
        return Summary(head: head, logBytes: logBytes, keys: keys, files: files)
    }

    /// Flushes a file or directory to disk.
    static func syncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw LedgerError(.file, "could not open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw LedgerError(.file, "fsync(\(path)): \(String(cString: strerror(errno)))") }
    }
}
