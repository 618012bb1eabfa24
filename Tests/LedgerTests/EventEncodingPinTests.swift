import Basics
import Crypto
import Foundation
import LedgerSamples
import Testing

@testable import Ledger

/// The bytes an event is written as are what its chain and Merkle tree hash: a build that wrote
/// one byte differently would fork every ledger it appends to. Each sample event (every type, and
/// the variants of each form) and each event of the fuzzing corpora, decoded and written again,
/// hashes as `Tests/Fixtures/event-encodings.txt` pins; an input the reader refuses is refused with
/// the pinned message.
///
/// The file is written again with `HANDOVER_PIN_ENCODINGS=1 swift test --filter EventEncodingPin`,
/// only for a change meant to alter what is written (a new sample, a new field), and the
/// difference is then read line by line.
@Suite("event encodings pinned")
struct EventEncodingPinTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let pinned = root.appendingPathComponent("Tests/Fixtures/event-encodings.txt")

    /// One line per input: its name, then the SHA-256 of the event written again, or why it was refused.
    static func encodings() throws -> [String] {
        let actor = Actor(osUser: "pin", host: "pin.example", tool: "handover/pin")
        let recordedAt = Timestamp(rfc3339: "2026-12-01T08:00:00.123456Z")!
        var lines: [String] = []
        for (i, draft) in (EventSamples.all() + EventSamples.variants()).enumerated() {
            let event = RecordedEvent(sequence: UInt64(i + 1), recordedAt: recordedAt, actor: actor, draft: draft)
            lines.append("sample \(i) \(draft.type.rawValue) \(digest(event.canonicalJSON))")
        }
        for folder in ["FuzzTesting/Corpus/event-json", "FuzzTesting/FailCases/event-json"] {
            let directory = root.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() {
                let bytes = try Data(contentsOf: directory.appendingPathComponent(name))
                do {
                    let event = try bytes.withUnsafeBytes { try RecordedEvent(json: $0) }
                    lines.append("\(folder)/\(name) \(digest(event.canonicalJSON))")
                } catch {
                    lines.append("\(folder)/\(name) refused: \(String(reflecting: error).replacingOccurrences(of: "\n", with: "\\n"))")
                }
            }
        }
        return lines
    }

    static func digest(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    @Test("every sample and corpus event is written as pinned")
    func writtenAsPinned() throws {
        let lines = try Self.encodings()
        if ProcessInfo.processInfo.environment["HANDOVER_PIN_ENCODINGS"] == "1" {
            try (lines.joined(separator: "\n") + "\n").write(to: Self.pinned, atomically: true, encoding: .utf8)
        }
        // Keyed by input; a fuzzing run may add corpus files since the pin (or merge some away):
        // those are written again above but have nothing to be compared with.
        func byInput(_ lines: [String]) -> [String: String] {
            Dictionary(lines.map { line in (Self.input(of: line), line) }, uniquingKeysWith: { first, _ in first })
        }
        let now = byInput(lines)
        let pinned = byInput(try String(contentsOf: Self.pinned, encoding: .utf8).split(separator: "\n").map(String.init))
        #expect(now.keys.filter { $0.hasPrefix("sample ") }.count == pinned.keys.filter { $0.hasPrefix("sample ") }.count)
        for (input, pin) in pinned.sorted(by: { $0.key < $1.key }) {
            guard let line = now[input] else { continue }
            if line != pin { Issue.record("written differently from the pin:\n  now: \(line)\n  pin: \(pin)") }
        }
    }

    /// What a line is about: `sample 3` or a corpus file's path.
    static func input(of line: String) -> String {
        let words = line.split(separator: " ", maxSplits: 2)
        return words[0] == "sample" ? "sample \(words[1])" : String(words[0])
    }
}
