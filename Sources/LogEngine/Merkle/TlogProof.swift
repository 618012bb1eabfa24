import Foundation

/// An inclusion proof in C2SP tlog-proof form (`c2sp.org/tlog-proof@v1`): the leaf index, the
/// RFC 9162 audit path one base64 hash a line, an empty line, then the checkpoint verbatim.
/// Checkable offline, against the log's verifier key, by tools that know the format.
public struct TlogProof: Equatable, Sendable {
    /// The format's first line.
    public static let header = "c2sp.org/tlog-proof@v1"

    /// The zero-based leaf index (an event's sequence number minus one).
    public var index: UInt64
    /// Sibling hashes from the leaf up to the root's child.
    public var path: [[UInt8]]
    /// The checkpoint's text, verbatim.
    public var checkpointText: String

    public init(index: UInt64, path: [[UInt8]], checkpointText: String) {
        self.index = index
        self.path = path
        self.checkpointText = checkpointText
    }

    /// The proof of `proof`'s event.
    public init(_ proof: InclusionProof) {
        self.init(index: proof.sequence - 1, path: proof.path, checkpointText: proof.checkpoint.text)
    }

    /// The proof's text.
    public var text: String {
        var lines = [TlogProof.header, "index \(index)"]
        lines += path.map { Data($0).base64EncodedString() }
        return lines.joined(separator: "\n") + "\n\n" + checkpointText
    }

    /// Reads a proof's text, checking its form (an `extra` line is read past: it carries
    /// nothing Handover writes); the description of what is wrong otherwise.
    public init(parsing text: String) throws {
        func bad(_ why: String) -> LedgerError { LedgerError(.malformedRecord, "not a tlog-proof: \(why)") }
        guard let split = text.range(of: "\n\n") else { throw bad("no empty line before the checkpoint") }
        var lines = text[..<split.lowerBound].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.first == TlogProof.header else { throw bad("the first line is not \(TlogProof.header)") }
        lines.removeFirst()
        if lines.first?.hasPrefix("extra ") == true { lines.removeFirst() }
        guard let indexLine = lines.first, indexLine.hasPrefix("index "), let index = UInt64(indexLine.dropFirst(6)),
            String(index) == indexLine.dropFirst(6)
        else { throw bad("no \"index N\" line (decimal, no leading zeros)") }
        var path: [[UInt8]] = []
        for line in lines.dropFirst() {
            guard let hash = Data(base64Encoded: line), hash.count == 32 else { throw bad("\"\(line.prefix(60))\" is not a base64 SHA-256 hash") }
            path.append(Array(hash))
        }
        self.init(index: index, path: path, checkpointText: String(text[split.upperBound...]))
    }
}
