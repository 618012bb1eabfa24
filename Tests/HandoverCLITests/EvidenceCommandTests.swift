import Foundation
import Testing
import TestSupport
@testable import Ledger

/// `checkpoint`, `prove` and `verify --checkpoint` as an auditor runs them.
@Suite("audit evidence on the command line")
struct EvidenceCommandTests {
    let dir = TemporaryDirectory()

    /// A ledger of `count` synthetic exchange events (plus "ledger created").
    private func labLedger(_ name: String, count: Int) throws -> String {
        let path = dir.sub(name)
        let r = try runProduct("handover-lab", ["append", "--ledger", path, "--count", "\(count)", "--prefix", name, "--create"])
        #expect(r.status == 0, "\(r.err)")
        return path
    }

    @Test("a checkpoint signed before more events still holds; an edited or foreign one exits 4; prove needs a covering checkpoint")
    func checkpointAndProve() throws {
        let path = try labLedger("l", count: 200)
        var r = try handover("checkpoint", "--ledger", path, "--out", dir.sub("old.txt"))
        #expect(r.status == 0 && r.out.contains("\n201\n"), "\(r.out)\(r.err)")
        r = try handover("prove", "5", "--ledger", path)
        #expect(r.status == 0, "\(r.err)")
        let proof = try JSONValue.parse(Array(r.out.utf8))
        #expect(proof["sequence"]?.intValue == 5 && proof["tree_size"]?.intValue == 201)
        #expect(try handover("prove", "202", "--ledger", path).err.contains("not covered by the checkpoint of 201 events"))

        r = try runProduct("handover-lab", ["append", "--ledger", path, "--count", "100", "--prefix", "more"])
        #expect(r.status == 0, "\(r.err)")
        r = try handover("verify", "--ledger", path, "--checkpoint", dir.sub("old.txt"))
        #expect(r.status == 0 && r.out.contains("consistency proof to today's 301 events"), "\(r.out)\(r.err)")

        let text = try String(contentsOfFile: dir.sub("old.txt"), encoding: .utf8)
        try text.replacingOccurrences(of: "\n201\n", with: "\n200\n").write(toFile: dir.sub("edited.txt"), atomically: true, encoding: .utf8)
        r = try handover("verify", "--ledger", path, "--checkpoint", dir.sub("edited.txt"))
        #expect(r.status == 4 && r.err.contains("signature does not verify"), "\(r.err)")

        let other = try labLedger("other", count: 3)
        r = try handover("checkpoint", "--ledger", other, "--out", dir.sub("foreign.txt"))
        r = try handover("verify", "--ledger", path, "--checkpoint", dir.sub("foreign.txt"))
        #expect(r.status == 4 && r.err.contains("this ledger is"), "\(r.err)")
        r = try handover("verify", "--ledger", path, "--checkpoint", dir.sub("absent.txt"))
        #expect(r.status == 2, "\(r.err)")
    }

    @Test("a log altered after a checkpoint fails verify --checkpoint with exit 4")
    func alteredLogFails() throws {
        let path = try labLedger("l", count: 120)
        let signed = try handover("checkpoint", "--ledger", path, "--out", dir.sub("cp.txt"))
        #expect(signed.status == 0, "\(signed.err)")
        let key = try handover("checkpoint", "--ledger", path, "--public-key").out
        let verified = try handover("verify", "--ledger", path, "--checkpoint", dir.sub("cp.txt"), "--public-key", key)
        #expect(verified.status == 0, "\(verified.err)")
        try flipByte(in: path, inRecordContaining: "\"seq\":40,")
        let r = try handover("verify", "--ledger", path, "--checkpoint", dir.sub("cp.txt"), "--public-key", key)
        #expect(r.status == 4, "\(r.err)")
        #expect(r.err.contains("event 40"), "\(r.err)")
    }
}
