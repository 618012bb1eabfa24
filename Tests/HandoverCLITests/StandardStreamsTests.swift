import Basics
import Foundation
import Ledger
import TestSupport
import Testing

/// `-` is standard output or input, as in git, psql and sqlite3; a file read once may be a pipe.
@Suite("standard output and input, and files that are pipes")
struct StandardStreamsTests {
    @Test(
        "export --format jsonl --out - writes every row of a directory export, table by table, and its manifest last; sqlite --out - writes the database's bytes; csv --out - is refused naming why, with no directory named -"
    )
    func exportToStandardOutput() throws {
        let dir = TemporaryDirectory()
        // Team B's: its packages' and apply batches' rows are kept beside their events.
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        let files = dir.sub("export")
        #expect(try handover("export", "--ledger", ledger, "--format", "jsonl", "--out", files).status == 0)
        let streamed = try runProduct("handover", ["export", "--ledger", ledger, "--format", "jsonl", "--out", "-"])
        #expect(streamed.status == 0, "\(streamed.err)")
        #expect(streamed.err.hasPrefix("Exported to standard output (jsonl): "), "the summary goes to standard error: \(streamed.err)")

        var tables: [String: [JSONValue]] = [:]
        let lines = streamed.out.split(separator: "\n")
        for line in lines {
            let object = try #require(try JSONValue.parse(Array(line.utf8)).objectValue, "\(line.prefix(80))")
            tables[object["table"]?.stringValue ?? "?", default: []].append(try #require(object["row"]))
        }
        #expect(Set(tables.keys) == ["events", "event_rows", "users", "manifest"])
        for table in ["events", "event_rows", "users"] {
            let file = try String(contentsOfFile: files + "/\(table).jsonl", encoding: .utf8).split(separator: "\n")
            #expect(try file.map { try JSONValue.parse(Array($0.utf8)) } == tables[table] ?? [], "\(table): the stream's rows are the file's")
        }
        #expect(try #require(tables["events"]).count > 300)
        #expect(try JSONValue.parse(Array(lines.last!.utf8)).objectValue?["table"] == .string("manifest"), "the manifest comes last")

        let database = try runCommand(
            "/bin/sh",
            ["-c", "\"$0\" export --ledger \"$1\" --format sqlite --out - > \"$2\"", productPath("handover"), ledger, dir.sub("stream.sqlite")])
        #expect(database.status == 0, "\(database.err)")
        let header = try Data(contentsOf: URL(fileURLWithPath: dir.sub("stream.sqlite"))).prefix(16)
        #expect(header == Data("SQLite format 3\0".utf8), "a SQLite database on standard output")

        let csv = try runProduct("handover", ["export", "--ledger", ledger, "--format", "csv", "--out", "-"])
        #expect(csv.status == 2 && csv.err.contains("a csv export is a directory of files"), "\(csv.err)")
        #expect(!FileManager.default.fileExists(atPath: "-"), "no directory named -")
    }

    @Test(
        "verify --checkpoint reads the checkpoint from a process substitution <(…) and from standard input (-), as from a file; a directory is refused naming it"
    )
    func checkpointFromAPipe() throws {
        let dir = TemporaryDirectory()
        let ledger = try DemoLedger.copy(.sender, into: dir)
        let checkpoint = dir.sub("checkpoint.txt")
        #expect(try handover("checkpoint", "--ledger", ledger, "--out", checkpoint).status == 0)
        let file = try handover("verify", "--ledger", ledger, "--checkpoint", checkpoint)
        #expect(file.status == 0, "\(file.out)\(file.err)")

        let substituted = try runCommand(
            "/bin/bash", ["-c", "\"$0\" verify --ledger \"$1\" --checkpoint <(cat \"$2\")", productPath("handover"), ledger, checkpoint])
        #expect(substituted.status == 0 && substituted.out == file.out, "\(substituted.out)\(substituted.err)")
        let piped = try runProduct(
            "handover", ["verify", "--ledger", ledger, "--checkpoint", "-"], input: try Data(contentsOf: URL(fileURLWithPath: checkpoint)))
        #expect(piped.status == 0 && piped.out == file.out, "\(piped.out)\(piped.err)")
        let directory = try handover("verify", "--ledger", ledger, "--checkpoint", dir.path)
        #expect(directory.status == 2 && directory.err.contains("\(dir.path) is not a file or a pipe"), "\(directory.err)")
    }
}
