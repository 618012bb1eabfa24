import Foundation
import FuzzHarnesses
import TestSupport
import Testing

/// Every corpus file and fail case of FuzzTesting/ through its harness's body, on the ordinary
/// build, each harness in a process of its own (`handover-lab fuzz replay`): a trap that comes
/// back fails the test naming the file, instead of killing the test runner. The fuzzers
/// themselves run in tools/fuzz, not here: their progress is not deterministic.
@Suite("fuzzing corpora and fail cases replayed")
struct FuzzReplayTests {
    static let testing = URL(fileURLWithPath: FuzzFixtures.directory).deletingLastPathComponent().path

    /// The input files of `harness`: its corpus, then its fail cases.
    static func inputs(_ harness: String) -> [String] {
        ["Corpus", "FailCases"].flatMap { folder -> [String] in
            let dir = testing + "/\(folder)/\(harness)"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
            return names.filter { !$0.hasPrefix(".") }.sorted().map { dir + "/" + $0 }
        }
    }

    @Test("each harness takes every file of its corpus and fail cases without a trap", arguments: Harness.all.map(\.name))
    func replay(_ harness: String) throws {
        var remaining = FuzzReplayTests.inputs(harness)
        #expect(!remaining.isEmpty, "\(harness) has no corpus")
        var trapped: [String] = []
        // One process for the lot; after a trap, a new one from the file after it.
        while !remaining.isEmpty {
            let r = try runProduct("handover-lab", ["fuzz", "replay", harness] + remaining, environment: ["SWIFT_BACKTRACE": "enable=no"])
            if r.status == 0 { break }
            let last = r.err.split(separator: "\n").last { $0.hasPrefix("replay ") }.map { String($0.dropFirst("replay ".count)) }
            guard let last, let index = remaining.firstIndex(of: last) else {
                Issue.record("\(harness): the replay failed before any input: \(r.err.suffix(2000))")
                return
            }
            trapped.append(
                last + ": "
                    + (r.err.split(separator: "\n").first { $0.contains("Fatal error") || $0.contains("fuzz finding") }.map(String.init)
                        ?? "status \(r.status)"))
            remaining.removeFirst(index + 1)
        }
        #expect(trapped.isEmpty, "\(harness): inputs that trap:\n\(trapped.joined(separator: "\n"))")
    }

    @Test("every corpus and fail-case folder belongs to a harness, and every harness has seeds")
    func foldersMatchHarnesses() throws {
        let names = Set(Harness.all.map(\.name))
        for folder in ["Corpus", "FailCases"] {
            let found = Set((try? FileManager.default.contentsOfDirectory(atPath: FuzzReplayTests.testing + "/" + folder)) ?? [])
            #expect(found.subtracting(names).isEmpty, "\(folder) holds folders of no harness: \(found.subtracting(names).sorted())")
        }
        let seeded = Set(try FileManager.default.contentsOfDirectory(atPath: FuzzReplayTests.testing + "/Corpus"))
        #expect(names.subtracting(seeded).isEmpty, "harnesses without a corpus: \(names.subtracting(seeded).sorted())")
    }
}
