import Basics
import Foundation
import Ledger
import TestSupport
import Testing

/// One person's row of a package of several chunks, proven in their evidence bundle through
/// the chunks' roots to the root team A signed.
@Suite("a person's row of a package of several chunks")
struct PackageRowEvidenceTests {
    static let checker =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .path + "/tools/check-bundle.py"

    @Test(
        "a package of 2,100 rows taken in as three chunks: the bundle of a person of the second chunk proves their row to the chunk's event and, through the other chunks' roots, to the manifest's rows-root; both checks accept it and refuse a changed package path"
    )
    func rowOfALaterChunk() throws {
        let fixture = try SignedHandoffTests.Fixture(users: 2_100)
        let recipient = fixture.teams.recipient
        let received = try handover("handoff", "receive", "--ledger", recipient, fixture.package, "--sender-key", fixture.senderKey)
        try #require(received.status == 0, "\(received.out)\(received.err)")
        try #require(try handover("checkpoint", "--ledger", recipient).status == 0)

        // Row 1,501 of rows.csv (after its header): in the second chunk of 1,024.
        let rows = try String(contentsOfFile: fixture.package + "/rows.csv", encoding: .utf8).components(separatedBy: "\r\n")
        try #require(rows.count == 2_102, "a header, 2,100 rows and the empty string after the last CRLF")
        let transferSub = try #require(rows[1_501].split(separator: ",").dropFirst().first.map(String.init))
        let bundle = fixture.teams.dir.sub("bundle")
        let written = try handover("evidence", transferSub, "--ledger", recipient, "--out", bundle)
        try #require(written.status == 0, "\(written.out)\(written.err)")

        let names = try FileManager.default.contentsOfDirectory(atPath: bundle + "/rows")
        try #require(names.count == 1)
        let rowFile = bundle + "/rows/" + names[0]
        var proof = try #require(try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: rowFile)))).objectValue)
        #expect(proof["row"]?.stringValue == rows[1_501], "the row exactly as rows.csv has it")
        let index = try #require(proof["index"]?.intValue)
        #expect(index == 1_500 - 1_024, "row 1,500 from 0 is row 476 of the second chunk")
        #expect(proof["chunk_path"]?.arrayValue?.count == 10, "1,024 rows: 10 hashes")
        #expect(proof["package_path"]?.arrayValue?.count == 2, "chunk 1 of 3: the roots of chunk 0 and of chunk 2")

        let ours = try handover("evidence", "verify", bundle, "--public-key", fixture.recipientKey)
        #expect(ours.status == 0 && ours.out.contains("lists row 1501 of 2100: "), "\(ours.out)\(ours.err)")
        let theirs = try runCommand("/usr/bin/env", ["python3", Self.checker, bundle, "--public-key", fixture.recipientKey])
        #expect(theirs.status == 0, "check-bundle.py: \(theirs.out)\(theirs.err)")

        // The other chunks' roots are what the path holds: one changed, the path leads elsewhere.
        var path = try #require(proof["package_path"]?.arrayValue)
        path[1] = .string(String(repeating: "0", count: 64))
        proof["package_path"] = .array(path)
        try Data(JSONValue.object(proof).canonicalBytes + [0x0A]).write(to: URL(fileURLWithPath: rowFile))
        let refused = try handover("evidence", "verify", bundle)
        #expect(
            refused.status == 4 && refused.err.contains("rows/\(names[0]): its package_path does not lead to package 1's rows-root"),
            "\(refused.out)\(refused.err)")
        let theirsRefused = try runCommand("/usr/bin/env", ["python3", Self.checker, bundle])
        #expect(
            theirsRefused.status == 1 && (theirsRefused.out + theirsRefused.err).contains("FAIL: rows/\(names[0])"),
            "\(theirsRefused.out)\(theirsRefused.err)")
    }
}
