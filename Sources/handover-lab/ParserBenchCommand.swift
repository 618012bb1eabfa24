import ArgumentParser
import Basics
import Foundation
import Ledger
import LogEngine
import Migration

/// `handover-lab bench-parsers`: each parser a stranger's input reaches, called directly with
/// inputs of 10× growing size up to its limit, so that a cost growing faster than the input
/// shows as a ratio: the time per input byte at each size against the time per byte at the
/// smallest size, measured in the same run (about 1 or below for a linear parser; 10, 100, …
/// for a quadratic one).
struct ParserBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-parsers",
        abstract: "Time every parser of outside input at 10× growing sizes; print the cost per byte against the smallest size.")

    @Option(help: "Runs per input; the fastest counts.") var repeats = 3

    /// One parser with the inputs it is timed on.
    struct Case {
        let name: String
        /// The sizes, in the unit the name gives.
        let sizes: [Int]
        let input: (Int) -> [UInt8]
        let parse: ([UInt8]) -> Void
    }

    func run() throws {
        let cases: [Case] = [
            Case(
                name: "users CSV header, N distinct columns (no sub)", sizes: [100, 1_000, 10_000, 100_000],
                input: { n in Array(((0..<n).map { "column\($0)" }.joined(separator: ",") + "\n1\n").utf8) },
                parse: { _ = try? UserList(bytes: $0, path: "users.csv", keyColumn: "sub") }),
            Case(
                name: "users CSV header, N columns all named sub", sizes: [100, 1_000, 10_000, 100_000],
                input: { n in Array((Array(repeating: "sub", count: n).joined(separator: ",") + "\n").utf8) },
                parse: { _ = try? UserList(bytes: $0, path: "users.csv", keyColumn: "sub") }),
            Case(
                name: "users CSV, N rows of sub and account_id", sizes: [1_000, 10_000, 100_000, 1_000_000],
                input: { n in Array(("sub,account_id\n" + (0..<n).map { "000123.\(String(format: "%032x", $0)).0456,acct-\($0)\n" }.joined()).utf8) },
                parse: { _ = try? UserList(bytes: $0, path: "users.csv", keyColumn: "sub") }),
            Case(
                name: "JSON object (claims, a body), N members", sizes: [100, 1_000, 10_000, 100_000],
                input: { n in Array(("{" + (0..<n).map { "\"claim\($0)\":\($0)" }.joined(separator: ",") + "}").utf8) },
                parse: { _ = try? JSONValue.parseObject(untrusted: $0) }),
            Case(
                name: "JSON, N arrays nested to the limit (63 deep)", sizes: [10, 100, 1_000, 10_000],
                input: { n in
                    Array(
                        ("["
                            + Array(repeating: String(repeating: "[", count: 62) + String(repeating: "]", count: 62), count: n).joined(separator: ",")
                            + "]").utf8)
                },
                parse: { _ = try? JSONValue.parse(untrusted: $0) }),
            Case(
                name: "JSON string of N \\u escapes", sizes: [100, 1_000, 10_000, 100_000],
                input: { n in Array(("\"" + String(repeating: "\\u00e9", count: n) + "\"").utf8) },
                parse: { _ = try? JSONValue.parse(untrusted: $0) }),
            Case(
                name: "JSON number of N digits", sizes: [100, 1_000, 10_000, 100_000],
                input: { n in Array(("[1." + String(repeating: "7", count: n) + "]").utf8) },
                parse: { _ = try? JSONValue.parse(untrusted: $0) }),
            Case(
                name: "event JSON with N members in its body (the stored-event reader)", sizes: [10, 100, 1_000, 10_000],
                input: { n in ParserBenchCommand.event(bodyMembers: n) },
                parse: { bytes in _ = try? bytes.withUnsafeBytes { try RecordedEvent(json: $0) } }),
            Case(
                name: "signed note, N signature lines (the limit is 64)", sizes: [1, 4, 16, 64],
                input: { n in
                    Array(
                        ("handover/AAAA111111/fuzz\n1\nAAAA\ntime 2026-11-26T00:00:00.000000Z\n\n"
                            + String(
                                repeating: "\u{2014} handover/AAAA111111/fuzz " + Data(repeating: 7, count: 68).base64EncodedString() + "\n", count: n
                            )).utf8)
                },
                parse: { _ = try? SignedNote(parsing: $0) }),
            Case(
                name: "signed note, N bytes of text (64 KiB is a manifest's limit)", sizes: [64, 640, 6_400, 64_000],
                input: { n in
                    Array((String(repeating: "a", count: n) + "\n\n\u{2014} k " + Data(repeating: 7, count: 68).base64EncodedString() + "\n").utf8)
                },
                parse: { _ = try? SignedNote(parsing: $0) }),
            Case(
                name: "tlog-proof, N path lines (64 KiB holds about 1,400)", sizes: [1, 10, 100, 1_000],
                input: { n in
                    Array(
                        ("c2sp.org/tlog-proof@v1\nindex 5\n" + String(repeating: Data(repeating: 1, count: 32).base64EncodedString() + "\n", count: n)
                            + "\nx\n").utf8)
                },
                parse: { _ = try? TlogProof(parsing: String(decoding: $0, as: UTF8.self)) }),
            Case(
                name: "handoff manifest, N client lines", sizes: [1, 10, 100, 1_000],
                input: { n in ParserBenchCommand.manifest(clients: n) },
                parse: { _ = try? HandoffManifest(text: String(decoding: $0, as: UTF8.self)) }),
        ]
        print("parser\tsize\tbytes\tbest ms\tns/byte\tratio to the smallest size")
        for benchmark in cases {
            var base: Double?
            for size in benchmark.sizes {
                let input = benchmark.input(size)
                var best = Duration.seconds(1_000_000)
                for _ in 0..<max(1, repeats) {
                    let clock = ContinuousClock()
                    let elapsed = clock.measure { benchmark.parse(input) }
                    best = min(best, elapsed)
                }
                let seconds = Double(best.components.seconds) + Double(best.components.attoseconds) / 1e18
                let perByte = seconds * 1e9 / Double(input.count)
                base = base ?? perByte
                print(
                    "\(benchmark.name)\t\(size)\t\(input.count)\t\(String(format: "%.3f", seconds * 1000))\t\(String(format: "%.2f", perByte))\t\(String(format: "%.2f", perByte / base!))"
                )
            }
        }
    }

    /// A stored event whose body carries `n` extra members (read past by the reader).
    static func event(bodyMembers n: Int) -> [UInt8] {
        let extra: String = (0..<n).map { ",\"extra\($0)\":\"xxxxxxxx\"" }.joined()
        let head =
            "{\"actor\":{\"host\":\"h\",\"os_user\":\"u\",\"tool\":\"handover/0.1.0\"},\"body\":{\"accepted_at\":\"2026-11-06T00:00:00.000000Z\","
        let body = "\"deadline\":\"2027-01-05T00:00:00.000000Z\",\"window_days\":60" + extra + "},"
        let tail = "\"identifiers\":{},\"recorded_at\":\"2026-11-26T00:00:00.000000Z\",\"schema_version\":1,\"seq\":2,\"type\":\"transfer-accepted\"}"
        return Array((head + body + tail).utf8)
    }

    /// A handoff manifest's text with `n` client lines.
    static func manifest(clients n: Int) -> [UInt8] {
        let digest = String(repeating: "ab", count: 32)
        let clients: String = (0..<n).map { "client com.example.app\($0)\n" }.joined()
        let header =
            "handover-handoff/v1\npackage 1\nsender AAAA111111\n" + clients
            + "target BBBB222222\nrows 1\nrows-sha256 \(digest)\nprevious-tree-size 0\nissued 2026-11-26T00:00:00.000000Z\n\n"
        let checkpoint =
            "handover/AAAA111111/x\n1\n\(Data(repeating: 1, count: 32).base64EncodedString())\ntime 2026-11-26T00:00:00.000000Z\n\n"
            + "\u{2014} handover/AAAA111111/x \(Data(repeating: 7, count: 68).base64EncodedString())\n"
        return Array((header + checkpoint).utf8)
    }
}
