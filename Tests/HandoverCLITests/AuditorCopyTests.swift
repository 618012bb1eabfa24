import Basics
import Foundation
import Ledger
import TestSupport
import Testing

/// What an auditor gets: a copy of a ledger they must not (or cannot) change. Every command that
/// only reads answers from it exactly as from the original, and leaves every file as it was.
@Suite("the auditor's copy: write-protected, on a read-only mount, and without keys", .serialized)
struct AuditorCopyTests {
    let dir = TemporaryDirectory()

    /// The unprivileged user the write-protected copy belongs to (`nobody`).
    static let auditorID = "65534"

    /// Whether this machine lets the test bind-mount a directory read-only.
    static let canMount: Bool = {
        let probe = TemporaryDirectory()
        let source = probe.sub("source")
        let target = probe.sub("target")
        for path in [source, target] { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        guard (try? runCommand("/bin/mount", ["--bind", "-o", "ro", source, target]))?.status == 0 else { return false }
        _ = try? runCommand("/bin/umount", [target])
        return true
    }()

    /// Whether the test can run a command as another user (root, with setpriv).
    static let canDropPrivileges: Bool = {
        getuid() == 0
            && (try? runCommand("/usr/bin/setpriv", ["--reuid=\(auditorID)", "--regid=\(auditorID)", "--clear-groups", "/bin/true"]))?.status == 0
    }()

    /// `handover` run as the unprivileged auditor.
    private func handoverAsAuditor(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
        try runCommand(
            "/usr/bin/setpriv",
            ["--reuid=\(AuditorCopyTests.auditorID)", "--regid=\(AuditorCopyTests.auditorID)", "--clear-groups", productPath("handover")] + args)
    }

    /// A demo ledger (team B) with a checkpoint signed beside it; the directory is readable by all.
    private func original() throws -> (ledger: String, checkpoint: String) {
        chmod(dir.path, 0o755)
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        let checkpoint = dir.sub("checkpoint.txt")
        let signed = try handover(["checkpoint", "--ledger", ledger, "--out", checkpoint])
        try #require(signed.status == 0, "\(signed.err)")
        return (ledger, checkpoint)
    }

    /// A user the demo's recipient ledger knows: the first migrated one (which users the
    /// stand-in refuses, as revoked, changes from run to run).
    static let subject: String = {
        let dir = TemporaryDirectory()
        return withExtendedLifetime(dir) {
            let listed = (try? DemoLedger.copy(.recipient, into: dir)).flatMap {
                try? handover("query", "migrated", "--format", "json", "--ledger", $0)
            }
            let rows = listed.flatMap { try? JSONValue.parse(Array($0.out.utf8)).arrayValue } ?? []
            return rows.first?["account_id"]?.stringValue ?? "no migrated user in the demo's recipient ledger"
        }
    }()

    /// Every command an auditor runs that only reads, with its arguments (without `--ledger`).
    private func readCommands(checkpoint: String) -> [[String]] {
        var commands: [[String]] = [["verify"], ["verify", "--checkpoint", checkpoint], ["verify", "--checkpoint", checkpoint, "--format", "json"]]
        for format in ["json", "csv"] {
            for query in ["migrated", "pending", "state", "failures", "unmatched", "events"] {
                commands.append(["query", query, "--format", format])
            }
            commands.append(["query", "failures", "--by-class", "--format", format])
            commands.append(["query", "user", AuditorCopyTests.subject, "--format", format])
            commands.append(["query", "state", "--format", format, "--as-of", "2026-01-01"])
            commands.append(["window", "--format", format])
        }
        commands.append(["report", "--as-of", "2099-01-01", "--format", "json"])
        commands.append(["status", "--format", "json"])
        commands.append(["prove", "5", "--checkpoint", checkpoint])
        commands.append(["prove", "9"])
        commands.append(["checkpoint", "--public-key"])
        return commands
    }

    /// Runs every read command on `copy` (through `run`) and on `original`, expecting the same
    /// exit status and the same bytes on standard output, and no file of `files` changed.
    private func expectSameAnswers(
        copy: String, original: String, checkpoint: String, files: String,
        run: ([String]) throws -> (status: Int32, out: String, err: String)
    ) throws {
        let before = try fileStates(files)
        for command in readCommands(checkpoint: checkpoint) {
            let expected = try handover(command + ["--ledger", original])
            #expect(expected.status == 0 || command.first == "status", "\(command) on the original: \(expected.err)")
            let got = try run(command + ["--ledger", copy])
            // `status` names its ledger in the commands it suggests: the copy's path for the original's.
            #expect(
                got.status == expected.status && got.out.replacingOccurrences(of: copy, with: original) == expected.out,
                "\(command.joined(separator: " ")) on the copy: status \(got.status), \(got.err)")
        }
        let after = try fileStates(files)
        let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
        #expect(
            changed.isEmpty,
            "files created, removed or changed by reading: \(changed.map { "\($0): \(before[$0].map(String.init(describing:)) ?? "none") -> \(after[$0].map(String.init(describing:)) ?? "none")" })"
        )
    }

    @Test(
        "a write-protected copy owned by an unprivileged user: every read command answers as on the original, and no file is created or changed",
        .enabled(if: AuditorCopyTests.canDropPrivileges, "needs root and setpriv to run as an unprivileged user; skipped here"))
    func writeProtectedCopy() throws {
        let (ledger, checkpoint) = try original()
        let copy = dir.sub("copy")
        for command in [
            ["/bin/cp", "-a", ledger, copy], ["/bin/chown", "-R", "\(AuditorCopyTests.auditorID):\(AuditorCopyTests.auditorID)", copy],
            ["/bin/chmod", "-R", "a-w", copy],
        ] {
            let r = try runCommand(command[0], Array(command.dropFirst()))
            #expect(r.status == 0, "\(command.joined(separator: " ")): \(r.err)")
        }
        #expect(FileManager.default.fileExists(atPath: copy + "/lock.mdb"), "the copy carries the original's lock file, which its owner cannot write")
        try expectSameAnswers(copy: copy, original: ledger, checkpoint: checkpoint, files: copy, run: handoverAsAuditor)

        // One user's evidence, written elsewhere by the auditor, from the copy.
        let before = try fileStates(copy)
        let outside = dir.sub("auditor-out")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let owned = try runCommand("/bin/chown", ["\(AuditorCopyTests.auditorID):\(AuditorCopyTests.auditorID)", outside])
        #expect(owned.status == 0, "\(owned.err)")
        let evidence = try handoverAsAuditor(["evidence", AuditorCopyTests.subject, "--ledger", copy, "--out", outside + "/bundle"])
        #expect(evidence.status == 0, "\(evidence.out)\(evidence.err)")
        let checked = try handoverAsAuditor(["evidence", "verify", outside + "/bundle"])
        #expect(checked.status == 0 && checked.out.hasPrefix("OK: "), "\(checked.out)\(checked.err)")

        // A command that writes says so, and writes nothing.
        let erase = try handoverAsAuditor(["erase", AuditorCopyTests.subject, "--ledger", copy])
        #expect(erase.status == 2 && erase.err.contains("cannot be written by this user"), "\(erase.out)\(erase.err)")
        #expect(try fileStates(copy) == before)
    }

    @Test(
        "a user who cannot write lock.mdb reads without locks only while no process has the ledger open: beside a writer it refuses, naming it",
        .enabled(if: AuditorCopyTests.canDropPrivileges, "needs root and setpriv to run as an unprivileged user; skipped here"))
    func readerBesideWriter() throws {
        let (ledger, _) = try original()
        // The ledger's files are root's: the auditor may read them, not write lock.mdb.
        do {
            let writer = try Ledger.open(at: ledger)
            defer { writer.close() }
            let r = try handoverAsAuditor(["verify", "--ledger", ledger])
            #expect(
                r.status == 2 && r.err.contains("cannot be read safely by this user") && r.err.contains("process \(getpid())"), "\(r.out)\(r.err)")
        }
        let r = try handoverAsAuditor(["verify", "--ledger", ledger])
        #expect(r.status == 0 && r.out.hasPrefix("OK: "), "once the writer is gone: \(r.out)\(r.err)")
    }

    @Test(
        "a copy on a read-only bind mount: every read command answers as on the original, and no file is created or changed",
        .enabled(if: AuditorCopyTests.canMount, "needs to bind-mount a directory read-only (root, and a container that allows mount); skipped here"))
    func readOnlyMount() throws {
        let (ledger, checkpoint) = try original()
        let copy = dir.sub("copy")
        let mountPoint = dir.sub("mounted")
        let copied = try runCommand("/bin/cp", ["-a", ledger, copy])
        #expect(copied.status == 0, "\(copied.err)")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try runCommand("/bin/mount", ["--bind", "-o", "ro", copy, mountPoint])
        try #require(mounted.status == 0, "\(mounted.err)")
        defer { _ = try? runCommand("/bin/umount", ["-l", mountPoint]) }
        #expect(!FileManager.default.isWritableFile(atPath: mountPoint + "/lock.mdb"), "the mount is read-only")
        try expectSameAnswers(copy: mountPoint, original: ledger, checkpoint: checkpoint, files: copy, run: handover)
    }

    @Test(
        "a backup without keys holds no byte of the signing key or of any data key; read-only it verifies, proves and gives the verifier key; erased users show as erased, the others as sealed"
    )
    func keylessCopy() throws {
        let (ledger, _) = try original()
        let evidence = dir.sub("evidence")
        let backup = try handover(["backup", "--ledger", ledger, "--out", evidence, "--without-keys"])
        #expect(backup.status == 0, "\(backup.err)")

        // The secrets of the original: the signing key (as stored and raw) and every data key.
        let keyText = try String(contentsOfFile: ledger + "/checkpoint.key", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let rawSigningKey = try #require(Data(base64Encoded: keyText))
        var secrets: [(String, [UInt8])] = [("checkpoint.key as stored", Array(keyText.utf8)), ("the raw signing key", Array(rawSigningKey))]
        let slots = try #require(FileManager.default.contents(atPath: ledger + "/keys/slots"))
        for offset in stride(from: 0, to: slots.count - 63, by: 64) {
            let slot = Array(slots[offset..<offset + 64])
            if slot.contains(where: { $0 != 0 }) { secrets.append(("data key in slot \(offset / 64)", Array(slot[16..<48]))) }
        }
        #expect(secrets.count > 100, "the demo's data keys were found: \(secrets.count - 2)")
        for (name, bytes) in secrets {
            #expect(try !filesContain(evidence, bytes: bytes), "\(name) is in the copy")
        }
        #expect(!FileManager.default.fileExists(atPath: evidence + "/checkpoint.key") && !FileManager.default.fileExists(atPath: evidence + "/keys"))

        let before = try fileStates(evidence)
        var r = try handover(["verify", "--ledger", evidence])
        #expect(r.status == 0 && r.out.hasPrefix("OK: "), "\(r.err)")
        for command in [["prove", "9"], ["checkpoint", "--public-key"]] {
            let fromOriginal = try handover(command + ["--ledger", ledger])
            r = try handover(command + ["--ledger", evidence])
            #expect(r.status == 0 && r.out == fromOriginal.out, "\(command): \(r.err)")
        }

        let state = try handover(["query", "state", "--ledger", evidence, "--format", "json"])
        #expect(state.status == 0, "\(state.err)")
        let users = try #require(try JSONValue.parse(Array(state.out.utf8)).arrayValue).compactMap(\.objectValue)
        let erased = users.filter { $0["erased_at"]?.stringValue != nil }
        let sealed = users.filter { $0["erased_at"]?.stringValue == nil && $0["email"]?.stringValue != nil }
        #expect(!erased.isEmpty && !sealed.isEmpty, "the demo has erased users (\(erased.count)) and users with an email (\(sealed.count))")
        #expect(erased.allSatisfy { $0["email"] == .string("(erased)") || $0["email"] == .null })
        #expect(sealed.allSatisfy { $0["email"] == .string("(sealed: no key)") }, "\(sealed.prefix(2))")
        #expect(try fileStates(evidence) == before, "reading the keyless copy created or changed nothing")

        // It cannot be written to, nor sign in the team's name.
        r = try handover(["checkpoint", "--ledger", evidence])
        #expect(r.status == 2 && r.err.contains("made without keys"), "\(r.out)\(r.err)")
        r = try handover(["erase", AuditorCopyTests.subject, "--ledger", evidence])
        #expect(r.status == 2 && r.err.contains("made without keys"), "\(r.out)\(r.err)")
        #expect(try fileStates(evidence) == before)

        // Without even the verifier key, `checkpoint --public-key` says so and makes none.
        try FileManager.default.removeItem(atPath: evidence + "/checkpoint.pub")
        let bare = try fileStates(evidence)
        r = try handover(["checkpoint", "--public-key", "--ledger", evidence])
        #expect(r.status == 2 && r.err.contains("has no checkpoint key yet") && r.out.isEmpty, "\(r.out)\(r.err)")
        #expect(try fileStates(evidence) == bare)
    }
}
