import Foundation
import Ledger
import Testing
import TestSupport

/// What the commands print for people: the words a user reads and the exit status with them.
@Suite("message wording")
struct MessageWordingTests {
    /// Runs `handover` with `args` in `directory`, as a user who typed relative paths there.
    static func handover(in directory: String, _ args: [String]) throws -> (status: Int32, out: String, err: String) {
        let quoted = ([productPath("handover")] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        return try runCommand("/bin/sh", ["-c", "cd '\(directory)' && exec " + quoted.joined(separator: " ")])
    }

    /// A new empty ledger at `directory/name` for `role`.
    static func newLedger(_ directory: TemporaryDirectory, _ name: String = "ledger", role: String = "recipient") throws -> String {
        let path = directory.sub(name)
        let made = try TestSupport.handover("init", "--ledger", path, "--team-id", role == "sender" ? "AAAA111111" : "BBBB222222",
                                            "--client-id", "com.example.app", "--role", role)
        #expect(made.status == 0, "\(made.err)")
        return path
    }

    @Test("backup --out with a name and no directory part writes the copy in the current directory and exits 0")
    func backupToBareName() throws {
        let dir = TemporaryDirectory()
        _ = try Self.newLedger(dir, "L")
        let r = try Self.handover(in: dir.path, ["backup", "--ledger", "L", "--out", "bk"])
        #expect(r.status == 0 && r.err.isEmpty, "exit \(r.status)\n\(r.out)\(r.err)")
        #expect(r.out.hasPrefix("Backed up L to bk: "), "\(r.out)")
        let verified = try TestSupport.handover("verify", "--ledger", dir.sub("bk"))
        #expect(verified.status == 0, "\(verified.out)\(verified.err)")
    }
}
