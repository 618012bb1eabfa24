import Basics
import Foundation
import LogEngine
import TestSupport
import Testing

@testable import Ledger

/// `handover witness` against aics-witness (PyPI), a C2SP tlog-witness server nobody here
/// wrote: cosignatures over growing checkpoints, and a rewritten log refused.
@Suite("witnesses: handover's checkpoints cosigned by aics-witness")
struct WitnessCommandTests {
    let dir = TemporaryDirectory()

    /// A ledger of `count` synthetic events after "ledger created" (more appended to an
    /// existing one), with a checkpoint of it.
    @discardableResult
    private func grow(_ path: String, by count: Int, prefix: String, create: Bool = false) throws -> Checkpoint {
        let r = try runProduct(
            "handover-lab", ["append", "--ledger", path, "--count", "\(count)", "--prefix", prefix] + (create ? ["--create"] : []))
        try #require(r.status == 0, "\(r.err)")
        let signed = try handover("checkpoint", "--ledger", path)
        try #require(signed.status == 0, "\(signed.err)")
        return try Checkpoint(parsing: signed.out)
    }

    /// The ledger's origin and verifier key, as its team hands them to a witness.
    private func identity(of path: String) throws -> (origin: String, vkey: String) {
        let vkey = try handover("checkpoint", "--ledger", path, "--public-key").out.trimmingCharacters(in: .whitespacesAndNewlines)
        return (String(vkey.prefix { $0 != "+" }), vkey)
    }

    /// The "witness cosigned" events of the ledger, as `query events` prints them.
    private func cosignedEvents(_ path: String) throws -> [JSONValue] {
        let r = try handover("query", "events", "--ledger", path, "--type", "witness-cosigned", "--format", "json")
        try #require(r.status == 0, "\(r.err)")
        return try #require(try JSONValue.parse(Array(r.out.utf8)).arrayValue)
    }

    @Test(
        "aics-witness cosigns three growing checkpoints, each after a consistency proof from the last; a bundle carries the cosignature and a policy that evidence verify and aics-tlog count; a rewritten copy of the log with the same key is refused (422), reported with exit 4, and nothing is recorded as cosigned"
    )
    func cosignedAsTheLogGrows() throws {
        let ledger = dir.sub("l")
        var checkpoint = try grow(ledger, by: 300, prefix: "a", create: true)
        let (origin, vkey) = try identity(of: ledger)
        let witness = try WitnessServer(in: dir.sub("witness"), name: "witness.test/w1", logs: [(origin, vkey)])
        let added = try handover("witness", "add", witness.url, "--key", witness.vkey, "--ledger", ledger)
        #expect(added.status == 0 && added.out.contains("Added witness witness.test/w1"), "\(added.out)\(added.err)")

        var sizes: [UInt64] = []
        let copy = dir.sub("copy")
        for round in 0..<3 {
            if round > 0 { checkpoint = try grow(ledger, by: 250 * round, prefix: "a\(round)") }
            let r = try handover("witness", "--ledger", ledger)
            let from = sizes.last ?? 0
            #expect(
                r.status == 0 && r.out.contains(/witness.test\/w1: cosigned at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/)
                    && r.out.contains("(proof from \(from))"), "the time in RFC 3339: \(r.out)\(r.err)")
            // What the witness itself holds now: this checkpoint's size and root.
            let state = try #require(try witness.log(origin), "\(witness.printed)")
            #expect(state["size"] as? Int == Int(checkpoint.treeSize), "\(state)")
            #expect(
                state["root"] as? String == Data(checkpoint.rootHash).base64EncodedString()
                    || state["root"] as? String == Hex.encode(checkpoint.rootHash), "\(state)")
            sizes.append(checkpoint.treeSize)
            // A copy of the ledger as it is after the first round, keys and all.
            if round == 0 { try #require(try handover("backup", "--ledger", ledger, "--out", copy).status == 0) }
        }
        let events = try cosignedEvents(ledger)
        let recordedSizes: [Int64?] = events.map { $0["body"]?["checkpoint"]?["tree_size"]?.intValue }
        let oldSizes: [Int64?] = events.map { $0["body"]?["old_size"]?.intValue }
        let expectedSizes: [Int64?] = sizes.map { Int64($0) }
        #expect(recordedSizes == expectedSizes)
        #expect(oldSizes == [0] + expectedSizes.dropLast())

        // The cosigned checkpoint beside the ledger: the ledger's note with the witness's line,
        // which verifies as a cosignature/v1 with the witness's key.
        let file = try String(contentsOfFile: ledger + "/cosigned-checkpoint", encoding: .utf8)
        #expect(file == checkpoint.text + file.dropFirst(checkpoint.text.count) && file.count > checkpoint.text.count, "\(file)")
        let cosigned = try SignedNote(parsing: Array(file.utf8))
        let witnessKey = try #require(SignedNote.publicKey(fromVerifierKey: witness.vkey, type: Cosignature.signatureType))
        #expect(Cosignature.verified(in: cosigned, name: witnessKey.name, publicKey: witnessKey.key) != nil)
        #expect(try handover("checkpoint", "--ledger", ledger, "--cosigned").out == file)

        // One person's evidence bundle is proved against the cosigned checkpoint and carries the
        // cosignature with a policy; evidence verify counts it, and so does aics-tlog.
        let bundle = dir.sub("bundle")
        let written = try handover("evidence", "write", "a-5", "--ledger", ledger, "--out", bundle)
        #expect(written.status == 0 && written.out.contains("cosigned by witness.test/w1."), "\(written.out)\(written.err)")
        #expect(try String(contentsOfFile: bundle + "/cosigned-checkpoint", encoding: .utf8) == file)
        let policy = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: bundle + "/witness-policy.json"))))
        #expect(
            policy["quorum"]?.intValue == 1 && policy["witnesses"]?.arrayValue?.first?.stringValue == witness.vkey
                && policy["log"]?.stringValue == vkey)
        let checked = try handover("evidence", "verify", bundle, "--public-key", vkey)
        #expect(
            checked.status == 0 && checked.out.contains("Witnessed: cosigned by witness.test/w1, 1 of the quorum of 1"),
            "\(checked.out)\(checked.err)")
        let tlog = try TransparencyTools.tlog([
            "verify-checkpoint", "--note", bundle + "/cosigned-checkpoint", "--log-key", vkey, "--policy-file", bundle + "/witness-policy.json",
        ])
        #expect(tlog.status == 0 && tlog.answer?["ok"] as? Bool == true, "\(tlog.printed)")
        // The same policy in aics-tlog's card form: evidence verify, aics-tlog and check-bundle.py read it.
        let card = dir.sub("card.json")
        try Data("{\"witness_policy\":{\"quorum\":1,\"witnesses\":[\"\(witness.vkey)\"]},\"max_checkpoint_age\":3600}".utf8).write(
            to: URL(fileURLWithPath: card))
        let byCard = try handover("evidence", "verify", bundle, "--public-key", vkey, "--witness-policy", card)
        #expect(
            byCard.status == 0 && byCard.out.contains("Witnessed: cosigned by witness.test/w1, 1 of the quorum of 1"), "\(byCard.out)\(byCard.err)")
        let tlogCard = try TransparencyTools.tlog([
            "verify-checkpoint", "--note", bundle + "/cosigned-checkpoint", "--log-key", vkey, "--policy-file", card,
        ])
        #expect(tlogCard.status == 0 && tlogCard.answer?["ok"] as? Bool == true, "\(tlogCard.printed)")
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let theirs = try runCommand(
            "/usr/bin/env", ["python3", repository + "/tools/check-bundle.py", bundle, "--public-key", vkey, "--witness-policy", card])
        #expect(theirs.status == 0, "\(theirs.out)\(theirs.err)")
        // A policy of two witnesses, the second never asked: the bundle does not meet it.
        let other = Cosignature.verifierKey(name: "witness.test/w2", publicKey: [UInt8](repeating: 9, count: 32))
        let strict = dir.sub("strict.json")
        try Data("{\"quorum\":2,\"witnesses\":[\"\(witness.vkey)\",\"\(other)\"]}".utf8).write(to: URL(fileURLWithPath: strict))
        let unmet = try handover("evidence", "verify", bundle, "--witness-policy", strict)
        #expect(
            unmet.status == 4 && unmet.err.contains("cosigned-checkpoint: 1 cosignature of the policy's witnesses verifies, the quorum is 2"),
            "\(unmet.err)")
        let refusedWrite = try handover("evidence", "write", "a-5", "--ledger", ledger, "--out", dir.sub("bundle-strict"), "--witness-policy", strict)
        #expect(refusedWrite.status == 2 && refusedWrite.err.contains("cosigned by 2 of the policy's 2 witnesses"), "\(refusedWrite.err)")
        // A line by a witness the policy knows that does not verify: the whole note is refused
        // (signed-note), even with the quorum met by the other witness; aics-tlog refuses it too.
        let loose = dir.sub("loose.json")
        try Data("{\"quorum\":1,\"witnesses\":[\"\(witness.vkey)\",\"\(other)\"]}".utf8).write(to: URL(fileURLWithPath: loose))
        #expect(try handover("evidence", "verify", bundle, "--witness-policy", loose).status == 0)
        let forgedLine = Cosignature.keyID(name: "witness.test/w2", publicKey: [UInt8](repeating: 9, count: 32)) + [UInt8](repeating: 1, count: 72)
        try Data((file + "\u{2014} witness.test/w2 \(Data(forgedLine).base64EncodedString())\n").utf8).write(
            to: URL(fileURLWithPath: bundle + "/cosigned-checkpoint"))
        let failing = try handover("evidence", "verify", bundle, "--witness-policy", loose)
        #expect(
            failing.status == 4
                && failing.err.contains("cosigned-checkpoint: the line of the policy's witness witness.test/w2 does not verify with its key"),
            "\(failing.out)\(failing.err)")
        let tlogFailing = try TransparencyTools.tlog([
            "verify-checkpoint", "--note", bundle + "/cosigned-checkpoint", "--log-key", vkey, "--policy-file", loose,
        ])
        #expect(tlogFailing.answer?["ok"] as? Bool != true, "\(tlogFailing.printed)")

        // A second line by the log's own key that does not verify: refused as well.
        let logKey = try #require(Checkpoint.publicKey(fromVerifierKey: vkey))
        let forgedOwn = Checkpoint.keyID(name: logKey.name, publicKey: logKey.key) + [UInt8](repeating: 2, count: 64)
        try Data((file + "\u{2014} \(logKey.name) \(Data(forgedOwn).base64EncodedString())\n").utf8).write(
            to: URL(fileURLWithPath: bundle + "/cosigned-checkpoint"))
        let failingOwn = try handover("evidence", "verify", bundle)
        #expect(
            failingOwn.status == 4 && failingOwn.err.contains("cosigned-checkpoint: a line by the log's own key does not verify"),
            "\(failingOwn.out)\(failingOwn.err)")

        // A changed byte in the witness's line: the cosignature no longer counts.
        var cosignedBytes = Array(file.utf8)
        cosignedBytes[cosignedBytes.count - 10] ^= 0x01
        try Data(cosignedBytes).write(to: URL(fileURLWithPath: bundle + "/cosigned-checkpoint"))
        let tampered = try handover("evidence", "verify", bundle)
        #expect(tampered.status == 4 && tampered.err.contains("cosigned-checkpoint"), "\(tampered.out)\(tampered.err)")

        // Nothing new: the witness is not asked again.
        let again = try handover("witness", "--ledger", ledger)
        #expect(again.status == 0 && again.out.contains("cosigned before"), "\(again.out)\(again.err)")

        // The copy taken after the first round, given another history from there on, larger than
        // the real one and signed with the same key: the witness cosigned more of the real one,
        // and the proof from that size cannot hold.
        try grow(copy, by: 2_000, prefix: "forged")
        let before = try cosignedEvents(copy).count
        let refused = try handover("witness", "--ledger", copy)
        #expect(refused.status == 4, "\(refused.out)\(refused.err)")
        #expect(refused.out.contains("REFUSED as inconsistent (422"), "\(refused.out)")
        #expect(try cosignedEvents(copy).count == before, "nothing recorded as cosigned")
        // The witness still holds the real log's checkpoint, and kept the request as evidence.
        let state = try #require(try witness.log(origin))
        #expect(state["size"] as? Int == Int(sizes.last!), "\(state)")
        #expect((state["evidence"] as? Int ?? 0) >= 1, "\(state)")
    }

    /// A stand-in for a witness that answers badly, on loopback: `garbage` answers 200 with a
    /// line that is no cosignature, `slow` answers nothing for a minute.
    private func badWitness(_ mode: String) throws -> (RunningProduct, String) {
        let port = try unusedLoopbackPort()
        let script = """
            import http.server, sys, time
            class H(http.server.BaseHTTPRequestHandler):
                def do_POST(self):
                    self.rfile.read(int(self.headers.get("Content-Length", "0")))
                    if sys.argv[2] == "slow": time.sleep(60)
                    self.send_response(200); self.send_header("Content-Type", "text/plain"); self.end_headers()
                    self.wfile.write(b"\\u2014 not a cosignature\\n")
                def log_message(self, *a): pass
            http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
            """
        let server = try RunningProduct(executable: "/usr/bin/python3", ["-c", script, "\(port)", mode])
        for _ in 0..<100
        where (try? runCommand("/usr/bin/python3", ["-c", "import socket; socket.create_connection(('127.0.0.1', \(port)), 1)"]).status) != 0 {
            usleep(100_000)
        }
        return (server, "http://127.0.0.1:\(port)/")
    }

    @Test(
        "witnesses that are down, slow or answer garbage: the round says so for each and exits 1, records nothing, and the log and the other witness are unaffected; status and /metrics show each witness"
    )
    func witnessesThatFail() throws {
        let ledger = dir.sub("l")
        try grow(ledger, by: 100, prefix: "a", create: true)
        let (origin, vkey) = try identity(of: ledger)
        let good = try WitnessServer(in: dir.sub("good"), name: "witness.test/good", logs: [(origin, vkey)])
        let (garbage, garbageURL) = try badWitness("garbage")
        let (slow, slowURL) = try badWitness("slow")
        defer {
            garbage.signal(SIGKILL)
            slow.signal(SIGKILL)
        }
        let downURL = "http://127.0.0.1:\(try unusedLoopbackPort())"
        func key(_ name: String) -> String { Cosignature.verifierKey(name: name, publicKey: [UInt8](repeating: 7, count: 32)) }
        for (url, key) in [(good.url, good.vkey), (downURL, key("down")), (garbageURL, key("garbage")), (slowURL, key("slow"))] {
            let r = try handover("witness", "add", url, "--key", key, "--ledger", ledger)
            try #require(r.status == 0, "\(r.err)")
        }
        let r = try handover("witness", "--ledger", ledger, "--timeout", "2", "--attempts", "2")
        #expect(r.status == 1 && r.err.contains("3 witnesses of 4 did not cosign"), "\(r.out)\(r.err)")
        #expect(r.out.contains("witness.test/good: cosigned at"), "\(r.out)")
        #expect(r.out.contains("down: unavailable (no answer)"), "\(r.out)")
        #expect(r.out.contains("slow: unavailable (no answer)"), "\(r.out)")
        #expect(r.out.contains("garbage: answered what tlog-witness does not allow (200)"), "\(r.out)")
        // Only the good witness's cosignature is recorded; the log verifies.
        #expect(try cosignedEvents(ledger).count == 1)
        let verified = try handover("verify", "--ledger", ledger)
        #expect(verified.status == 0, "\(verified.out)\(verified.err)")
        // status names each witness and what it cosigned, and asks for the next round.
        let status = try handover("status", "--ledger", ledger)
        #expect(status.out.contains("witnesses:    witness.test/good cosigned 102 events"), "\(status.out)")
        #expect(status.out.contains("down nothing cosigned yet; garbage nothing cosigned yet; slow nothing cosigned yet"), "\(status.out)")
        #expect(status.out.contains("submit the latest checkpoint to the witnesses: handover witness"), "\(status.out)")
        // /metrics: each witness's largest cosigned checkpoint (0 for none yet), for the alert.
        let server = try ServerProcess(["serve", "--ledger", ledger, "--port", "0"])
        let metrics = try runCommand("/usr/bin/curl", ["-sf", server.baseURL + "/metrics"]).out
        server.stop()
        #expect(metrics.contains("\nhandover_checkpoint_size 102.0\n"), "\(metrics)")
        #expect(metrics.contains("\nhandover_witness_cosigned_size{witness=\"witness.test/good\"} 102.0\n"), "\(metrics)")
        #expect(metrics.contains("\nhandover_witness_cosigned_size{witness=\"down\"} 0.0\n"), "\(metrics)")
        #expect(metrics.contains("\nhandover_witness_cosigned_timestamp_seconds{witness=\"slow\"} 0.0\n"), "\(metrics)")
        let json = try JSONValue.parse(Array(try handover("status", "--ledger", ledger, "--format", "json").out.utf8))
        let sizes: [Int64?] = json["witnesses"]?.arrayValue?.map { $0["cosigned_size"]?.intValue } ?? []
        #expect(sizes == [102, nil, nil, nil], "\(json)")
    }
}
