import Basics
import Foundation
import LogEngine
import TestSupport
import Testing

@testable import Ledger

/// `serve` as a C2SP tlog-witness, fed by aics-witness's own client (aics_witness.feeder),
/// which checks every cosignature it gets with the witness's verifier key.
@Suite("serve as a witness, fed by aics-witness's client")
struct WitnessServeTests {
    let dir = TemporaryDirectory()

    /// Runs the feeder script with the transparency tools' Python.
    private func feeder(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let python = TransparencyTools.directory + "/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TransparencyTools.ToolMissing(description: "\(python) is missing: run tools/setup --transparency")
        }
        return try runCommand(python, [Fixture("transparency").path + "/feed-witness.py"] + arguments)
    }

    @Test(
        "aics-witness's client gets cosignatures from serve over four growing checkpoints, each verified with serve's witness key; a forked checkpoint is refused 422 and kept as evidence, a smaller one answered 409 with the size held; the state is in the ledger"
    )
    func fedByAicsWitnessClient() throws {
        let ledger = dir.sub("b")
        let made = try handover("init", "--ledger", ledger, "--team-id", "BBBB222222", "--client-id", "com.example.app", "--role", "recipient")
        try #require(made.status == 0, "\(made.err)")
        try #require(try handover("checkpoint", "--ledger", ledger).status == 0)
        let logDir = dir.sub("log")
        try FileManager.default.createDirectory(atPath: logDir, withIntermediateDirectories: true)
        let keygen = try feeder(["keygen", logDir])
        try #require(keygen.status == 0, "\(keygen.err)")
        let witnessKey = try handover("witness", "key", "--ledger", ledger).out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(witnessKey.hasPrefix("handover/BBBB222222/") && SignedNote.publicKey(fromVerifierKey: witnessKey, type: 0x04) != nil, "\(witnessKey)")

        let server = try ServerProcess(["serve", "--ledger", ledger, "--port", "0", "--witness-log", logDir + "/log.vkey"])
        let fed = try feeder(["feed", logDir, server.baseURL + "/witness", witnessKey])
        let serveEnded = server.finish()
        try #require(fed.status == 0, "\(fed.out)\(fed.err)\n\(serveEnded.err)")
        let result = try JSONValue.parse(Array(fed.out.utf8))
        let sizes: [Int64?] = result["cosigned"]?.arrayValue?.map { $0["size"]?.intValue } ?? []
        #expect(sizes == [5, 17, 40, 100], "\(fed.out)")
        // Each answer is one cosignature line by serve's witness name (the feeder verified it).
        for line in result["cosigned"]?.arrayValue?.compactMap({ $0["lines"]?.stringValue }) ?? [] {
            #expect(line.hasPrefix("\u{2014} handover/BBBB222222/") && line.hasSuffix("\n") && line.filter { $0 == "\n" }.count == 1, "\(line)")
        }
        #expect(result["refused"]?["forked"]?.intValue == 422, "\(fed.out)")
        #expect(result["refused"]?["smaller"]?.intValue == 100, "\(fed.out)")

        // The ledger holds the state and the evidence: four cosigned checkpoints, each from the
        // size before it, and the forked request as received.
        let witnessed = try handover("query", "events", "--ledger", ledger, "--type", "checkpoint-witnessed", "--format", "json")
        let events = try #require(try JSONValue.parse(Array(witnessed.out.utf8)).arrayValue, "\(witnessed.err)")
        let recorded: [Int64?] = events.map { $0["body"]?["tree_size"]?.intValue }
        let from: [Int64?] = events.map { $0["body"]?["old_size"]?.intValue }
        #expect(recorded == [5, 17, 40, 100] && from == [0, 5, 17, 40], "\(witnessed.out)")
        let refused = try handover("query", "events", "--ledger", ledger, "--type", "witness-request-refused", "--format", "json")
        let kept = try #require(try JSONValue.parse(Array(refused.out.utf8)).arrayValue)
        #expect(kept.count == 1 && kept.first?["body"]?["status"]?.intValue == 422, "\(refused.out)")
        #expect(kept.first?["body"]?["request"]?.stringValue?.hasPrefix("old 100\n") == true, "\(refused.out)")
        #expect(try handover("verify", "--ledger", ledger).status == 0)
    }
}
