import Basics
import Foundation
import LogEngine
import TestSupport
import Testing

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

    @Test(
        "a checkpoint signed before more events still holds; an edited or foreign one exits 4; prove needs a covering checkpoint (2) and an event the ledger holds (1)"
    )
    func checkpointAndProve() throws {
        let path = try labLedger("l", count: 200)
        // The checkpoint first commits the person index (event 202), then covers it.
        var r = try handover("checkpoint", "--ledger", path, "--out", dir.sub("old.txt"))
        #expect(r.status == 0 && r.out.contains("\n202\n"), "\(r.out)\(r.err)")
        r = try handover("query", "events", "--type", "person-index-committed", "--ledger", path, "--format", "json")
        let commits = try #require(try JSONValue.parse(Array(r.out.utf8)).arrayValue)
        #expect(commits.count == 1 && commits[0]["seq"]?.intValue == 202 && commits[0]["body"]?["indexed_size"]?.intValue == 201, "\(r.out)")
        // Signed again with nothing new: no second commit, the same size.
        r = try handover("checkpoint", "--ledger", path)
        #expect(r.status == 0 && r.out.contains("\n202\n"), "\(r.out)\(r.err)")
        r = try handover("prove", "5", "--ledger", path)
        #expect(r.status == 0, "\(r.err)")
        let proof = try JSONValue.parse(Array(r.out.utf8))
        #expect(proof["sequence"]?.intValue == 5 && proof["tree_size"]?.intValue == 202)
        r = try handover("prove", "203", "--ledger", path)
        #expect(r.status == 1 && r.err.contains("there is no event 203 in this ledger: it holds events 1 to 202"), "\(r.err)")

        r = try runProduct("handover-lab", ["append", "--ledger", path, "--count", "100", "--prefix", "more"])
        #expect(r.status == 0, "\(r.err)")
        r = try handover("prove", "203", "--ledger", path)
        #expect(r.status == 2 && r.err.contains("event 203 is not covered by the checkpoint of 202 events"), "\(r.err)")
        r = try handover("verify", "--ledger", path, "--checkpoint", dir.sub("old.txt"))
        #expect(r.status == 0 && r.out.contains("consistency proof to today's 302 events"), "\(r.out)\(r.err)")

        let text = try String(contentsOfFile: dir.sub("old.txt"), encoding: .utf8)
        try text.replacingOccurrences(of: "\n202\n", with: "\n201\n").write(toFile: dir.sub("edited.txt"), atomically: true, encoding: .utf8)
        r = try handover("verify", "--ledger", path, "--checkpoint", dir.sub("edited.txt"))
        #expect(r.status == 4 && r.err.contains("signature does not verify"), "\(r.err)")

        let other = try labLedger("other", count: 3)
        r = try handover("checkpoint", "--ledger", other, "--out", dir.sub("foreign.txt"))
        r = try handover("verify", "--ledger", path, "--checkpoint", dir.sub("foreign.txt"))
        #expect(r.status == 4 && r.err.contains("the ledger \(path) is ") && r.err.contains("not the log the checkpoint signed"), "\(r.err)")
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

    @Test(
        "verify --checkpoint with another ledger's key exits 2 naming both files and both origins; a key of the right name that does not verify exits 4"
    )
    func anotherLedgersKey() throws {
        let a = try labLedger("a", count: 3)
        let b = try labLedger("b", count: 5)
        #expect(try handover("checkpoint", "--ledger", b, "--out", dir.sub("cp.txt")).status == 0)
        let aKey = try handover("checkpoint", "--ledger", a, "--public-key").out
        try Data(aKey.utf8).write(to: URL(fileURLWithPath: dir.sub("a.pub")))
        let aOrigin = try #require(Checkpoint.publicKey(fromVerifierKey: aKey)).name
        let bOrigin = try #require(try String(contentsOfFile: dir.sub("cp.txt"), encoding: .utf8).split(separator: "\n").first.map(String.init))

        for format in ["text", "json"] {
            let r = try handover("verify", "--ledger", b, "--checkpoint", dir.sub("cp.txt"), "--public-key", dir.sub("a.pub"), "--format", format)
            #expect(r.status == 2 && r.out.isEmpty, "exit \(r.status): \(r.out)\(r.err)")
            #expect(
                r.err.hasPrefix(
                    "error: checkpoint \(dir.sub("cp.txt")) is of \(bOrigin), but the public key in \(dir.sub("a.pub")) is the verifier key of \(aOrigin): "
                        + "a key of another ledger, so nothing was checked."), "\(r.err)")
        }
        // The key's line itself, not a file: named as given.
        let given = try handover("verify", "--ledger", b, "--checkpoint", dir.sub("cp.txt"), "--public-key", aKey)
        #expect(given.status == 2 && given.err.contains("but the public key given (--public-key) is the verifier key of \(aOrigin)"), "\(given.err)")

        // A key named for team B's ledger that did not sign the checkpoint: the checkpoint does not hold.
        let stranger = try #require(Checkpoint.publicKey(fromVerifierKey: aKey)).key
        let forged = Checkpoint.verifierKey(name: bOrigin, publicKey: stranger)
        try Data(forged.utf8).write(to: URL(fileURLWithPath: dir.sub("forged.pub")))
        let r = try handover("verify", "--ledger", b, "--checkpoint", dir.sub("cp.txt"), "--public-key", dir.sub("forged.pub"))
        #expect(r.status == 4, "exit \(r.status): \(r.err)")
        #expect(
            r.err.hasPrefix(
                "error: checkpoint \(dir.sub("cp.txt")) (of \(bOrigin)) does not hold: its signature does not verify with the public key in \(dir.sub("forged.pub")) ("
            ),
            "\(r.err)")
    }
}
