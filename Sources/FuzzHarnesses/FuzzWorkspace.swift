import Foundation
import Ledger
import LogEngine
import Projections

#if canImport(Glibc)
import Glibc
#endif

/// This process's own directory for what the harnesses write (ledgers, files of a package or a
/// bundle), in memory where the machine has `/dev/shm`; removed when the process exits.
enum FuzzWorkspace {
    /// The directory, made on first use.
    static let path: String = {
        let base =
            ProcessInfo.processInfo.environment["HANDOVER_FUZZ_DIR"]
            ?? (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NSTemporaryDirectory())
        let path = base + "/handover-fuzz-\(getpid())"
        try? FileManager.default.removeItem(atPath: path)
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
            fatalError("cannot make the fuzzing workspace \(path): \(error)")
        }
        atexit { try? FileManager.default.removeItem(atPath: FuzzWorkspace.path) }
        return path
    }()

    /// An empty directory `name` inside the workspace (emptied if it was there).
    static func fresh(_ name: String) -> String {
        let dir = path + "/" + name
        try? FileManager.default.removeItem(atPath: dir)
        do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
            fatalError("cannot make \(dir): \(error)")
        }
        return dir
    }

    /// Writes `files` into the fresh directory `name`; returns its path.
    static func files(_ name: String, _ files: FuzzFiles.Files) -> String {
        let dir = fresh(name)
        do { try FuzzFiles.write(files, into: dir) } catch { fatalError("cannot write the input's files: \(error)") }
        return dir
    }

    /// A copy of the fixture `name` (a ledger, say) in the fresh directory `as`.
    static func copy(fixture name: String, as copy: String) -> String {
        self.copy(FuzzFixtures.path(name), as: copy)
    }

    /// A copy of the directory at `source` in the fresh directory `as`.
    static func copy(_ source: String, as copy: String) -> String {
        let target = path + "/" + copy
        try? FileManager.default.removeItem(atPath: target)
        do { try FileManager.default.copyItem(atPath: source, toPath: target) } catch {
            fatalError("cannot copy \(source) (tools/fuzz --fixtures makes the fixtures): \(error)")
        }
        return target
    }
}

/// What the harnesses start from, made once from a small rehearsal by `tools/fuzz --fixtures`
/// and kept in `FuzzTesting/Fixtures/`: both teams' ledgers (with their checkpoint keys), so
/// that the committed seeds, which are the rehearsal's files, reach the checks past the
/// signatures.
public enum FuzzFixtures {
    /// `FuzzTesting/Fixtures` in this checkout (or `HANDOVER_FUZZ_FIXTURES`).
    public static let directory: String =
        ProcessInfo.processInfo.environment["HANDOVER_FUZZ_FIXTURES"]
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FuzzTesting/Fixtures").path

    public static func path(_ name: String) -> String { directory + "/" + name }

    /// Team A's fixture ledger, a copy opened read-only: what checkpoints are audited against.
    static let senderLedger: Ledger = {
        do {
            return try Ledger.open(at: FuzzWorkspace.copy(fixture: "sender", as: "sender-read-only"), options: Ledger.Options(access: .readOnly))
        } catch {
            fatalError("cannot open the fixture ledger sender: \(error)")
        }
    }()

    /// Team A's fixture ledger, a copy opened for writing: what receipts are confirmed into.
    static let senderLedgerForWrites: Ledger = {
        do { return try Ledger.open(at: FuzzWorkspace.copy(fixture: "sender", as: "sender-writable"), folders: [UserProjection()]) } catch {
            fatalError("cannot open the fixture ledger sender: \(error)")
        }
    }()

    /// The checkpoint key of the fixture ledger `side` (`sender` or `recipient`).
    static func key(_ side: String) -> CheckpointKey {
        do { return try CheckpointKey.load(from: path(side)) } catch { fatalError("the fixture \(side) has no checkpoint key: \(error)") }
    }
}
