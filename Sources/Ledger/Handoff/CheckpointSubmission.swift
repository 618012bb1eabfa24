import Basics
import Foundation
import LogEngine

/// A checkpoint with a consistency proof from an older tree size, in the form of a C2SP
/// tlog-witness `add-checkpoint` request body (c2sp.org/tlog-witness): `old <size>`, one
/// base64 RFC 6962 consistency-proof hash a line, an empty line, then the checkpoint note.
///
/// A handoff package carries one, from the previous package's checkpoint to its own, so the
/// recipient (like any witness) can check the sender's log only grew in between.
public struct CheckpointSubmission: Equatable, Sendable {
    /// The older tree size (0 for a first package: then the proof is empty).
    public var oldSize: UInt64
    public var proof: [[UInt8]]
    /// The checkpoint note, verbatim.
    public var checkpointText: String

    /// The most proof lines tlog-witness allows.
    public static let maximumProofLines = 63

    public init(oldSize: UInt64, proof: [[UInt8]], checkpointText: String) {
        self.oldSize = oldSize
        self.proof = proof
        self.checkpointText = checkpointText
    }

    /// The request body's text.
    public var text: String {
        (["old \(oldSize)"] + proof.map { Data($0).base64EncodedString() }).joined(separator: "\n") + "\n\n" + checkpointText
    }

    /// Reads a request body, checking its form.
    public init(parsing text: String) throws {
        func bad(_ why: String) -> LedgerError { LedgerError(.malformedRecord, "not a tlog-witness add-checkpoint body: \(why)") }
        guard let split = text.range(of: "\n\n") else { throw bad("no empty line before the checkpoint") }
        let lines = text[..<split.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first, first.hasPrefix("old "), let old = UInt64(first.dropFirst(4)), String(old) == first.dropFirst(4) else {
            throw bad("the first line is not \"old N\" (decimal, no leading zeros)")
        }
        guard lines.count - 1 <= CheckpointSubmission.maximumProofLines else {
            throw bad("more than \(CheckpointSubmission.maximumProofLines) proof lines")
        }
        var proof: [[UInt8]] = []
        for line in lines.dropFirst() {
            guard let hash = Data(base64Encoded: String(line)), hash.count == 32 else {
                throw bad("\"\(InertText.forScreen(String(line.prefix(60))))\" is not a base64 SHA-256 hash")
            }
            proof.append(Array(hash))
        }
        guard old > 0 || proof.isEmpty else { throw bad("a proof from size 0 must be empty") }
        self.init(oldSize: old, proof: proof, checkpointText: String(text[split.upperBound...]))
    }
}
