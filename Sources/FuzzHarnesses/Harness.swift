import Foundation

/// One entry point that a stranger, the other company or an altered copy reaches, driven with
/// arbitrary bytes: what `tools/fuzz` runs under libFuzzer and `tools/test` replays.
///
/// A body calls the real code with the bytes and lets it refuse them: any error it throws is an
/// expected refusal. What is never expected is a trap (the process dies), a hang, or an
/// answer that breaks the code's own promises, which a body checks with ``HarnessCheck``.
public struct Harness: Sendable {
    /// The harness's name: its corpus and fail-case folder, and what `tools/fuzz` is given.
    public let name: String
    /// What it drives, in a line.
    public let summary: String
    let body: @Sendable ([UInt8]) throws -> Void

    init(_ name: String, _ summary: String, _ body: @escaping @Sendable ([UInt8]) throws -> Void) {
        self.name = name
        self.summary = summary
        self.body = body
    }

    /// Runs the body on `input`. Returns whether the input was accepted (nothing thrown); a
    /// broken promise stops the process, as a trap would.
    @discardableResult
    public func run(_ input: [UInt8]) -> Bool {
        do {
            try body(input)
            return true
        } catch {
            // A refusal is what most inputs get.
            return false
        }
    }

    /// Every harness.
    public static let all: [Harness] = [
        .usersCSV, .handoffPackage, .handoffReceipt, .checkpointNote, .tlogProof, .verifierKey,
        .evidenceBundle, .twoSidedBundle, .eventJSON, .storedRecord, .serveRequest, .signedClaims,
        .ingestToken, .appleAnswer, .keySet, .handoffReceive, .applyInputs, .witnessRequest, .witnessAnswer, .witnessList,
        .witnessPolicy, .tilesReadBack, .tilePath,
    ]

    /// The harness called `name`.
    public static func named(_ name: String) -> Harness? { all.first { $0.name == name } }
}

/// A promise of the code under test, checked on what it answered.
enum HarnessCheck {
    /// Stops the process, naming the harness's finding, when `condition` does not hold.
    static func expect(_ condition: @autoclosure () -> Bool, _ finding: @autoclosure () -> String) {
        if !condition() { fatalError("fuzz finding: \(finding())") }
    }
}
