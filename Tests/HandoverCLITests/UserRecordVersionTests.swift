import Basics
import Foundation
import LMDB
import Ledger
import TestSupport
import Testing

/// A ledger of projection layout 2 whose `user_versions` hold user record version 1
/// (`Tests/Fixtures/userrecord1`, made by `Tests/Fixtures/make-userrecord1-ledger.sh` with
/// commit 9ee31d0): this code upgrades it to layout 3, loading the projections again from the
/// log with record version 2, and answers as the old code did.
@Suite("ledgers written with user record version 1 and projection layout 2")
struct UserRecordVersionTests {
    let dir = TemporaryDirectory()
    static let fixture = Fixture("userrecord1")

    /// Every answer the old code gave, asked again of `ledger`.
    private func expectOldAnswers(_ ledger: String, _ when: String) throws {
        let times = try Self.fixture.text("as-of-times.txt").split(separator: "\n").map(String.init)
        let user = try Self.fixture.text("user.txt").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(times.count == 2)
        for (n, time) in times.enumerated() {
            var asked = ["migrated", "state", "unmatched"].map { ("\($0)-\(n).csv", ["query", $0, "--format", "csv"]) }
            asked.append(("user-\(n).json", ["query", "user", user, "--format", "json"]))
            asked.append(("report-\(n).json", ["report", "--format", "json"]))
            for (file, arguments) in asked {
                let r = try handover(arguments + ["--ledger", ledger, "--as-of", time])
                let expected = try Self.fixture.text("answers/" + file)
                #expect(r.status == 0 && Self.asOlderCode(r.out, file) == expected, "\(when): \(file) as of \(time): \(r.err)")
            }
        }
    }

    /// `output` without the columns answers gained after the fixture was written (``OlderAnswers``).
    private static func asOlderCode(_ output: String, _ file: String) -> String {
        guard file.hasSuffix(".json") else { return OlderAnswers.withoutAddedColumns(csv: output) }
        guard let value = try? JSONValue.parse(Array(output.utf8)) else { return output }
        return String(decoding: InertText.json(OlderAnswers.withoutAddedMembers(value).canonicalBytes), as: UTF8.self) + "\n"
    }

    /// The record version byte of every `user_versions` value (the empty value of a merged-away user left out).
    private func recordVersions(_ ledger: String) throws -> Set<UInt8> {
        try Environment(path: ledger, options: .init(readOnly: true)).read { txn in
            var found: Set<UInt8> = []
            for name in ["user_versions", "user_versions.1"] {
                try txn.withCursor(try txn.openDatabase(name, create: false)) { cursor in
                    var entry = try cursor.first()
                    while let (_, value) = entry {
                        if let first = value.first { found.insert(first) }
                        entry = try cursor.next()
                    }
                }
            }
            return found
        }
    }

    @Test(
        "a ledger of layout 2 holding version 1 records: a read is refused, naming handover upgrade, and changes no byte; the upgrade loads the projections again in version 2, with the same answers, a smaller user_versions and verify --deep passing"
    )
    func layoutTwoUpgraded() throws {
        let ledger = dir.sub("l")
        try FileManager.default.copyItem(atPath: Self.fixture.path + "/ledger", toPath: ledger)
        #expect(try recordVersions(ledger) == [1])
        let before = try fileStates(ledger)
        var r = try handover(["query", "state", "--ledger", ledger])
        #expect(r.status == 2 && r.err.contains("run `handover upgrade --ledger \(ledger)`"), "\(r.out)\(r.err)")
        #expect(try fileStates(ledger) == before, "reading changed no file")

        let sizeBefore = try usedBytes(ledger, "user_versions")
        r = try handover(["upgrade", "--ledger", ledger])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(try recordVersions(ledger) == [2])
        try expectOldAnswers(ledger, "upgraded")
        r = try handover(["verify", "--deep", "--ledger", ledger])
        #expect(r.status == 0 && r.out.contains("OK"), "\(r.out)\(r.err)")
        let sizeAfter = try usedBytes(ledger, "user_versions.1") + (try usedBytes(ledger, "user_versions"))
        #expect(sizeAfter * 10 < sizeBefore * 8, "version 2 takes less room: \(sizeAfter) bytes of values, version 1 \(sizeBefore)")
    }

    /// The bytes of every value in `database`.
    private func usedBytes(_ ledger: String, _ database: String) throws -> Int {
        try Environment(path: ledger, options: .init(readOnly: true)).read { txn in
            try txn.withCursor(try txn.openDatabase(database, create: false)) { cursor in
                var total = 0
                var entry = try cursor.first()
                while let (_, value) = entry {
                    total += value.count
                    entry = try cursor.next()
                }
                return total
            }
        }
    }
}
