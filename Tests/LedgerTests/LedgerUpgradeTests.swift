import Basics
import Foundation
import LMDB
import TestSupport
import Testing

@testable import Ledger

/// A ledger's upgrades are one ordered list, each step named and recorded in `meta` when it ran.
@Suite("ledger upgrades, one list")
struct LedgerUpgradeTests {
    /// Every `upgraded:` record of the ledger in `path`: step name → the time it ran.
    static func records(_ path: String) throws -> [String: String] {
        let environment = try Environment(path: path, options: Environment.Options(readOnly: true))
        return try environment.read { txn in
            var found: [String: String] = [:]
            try txn.withCursor(try txn.openDatabase("meta", create: false)) { cursor in
                var entry = try cursor.first()
                while let (key, value) = entry {
                    let name = String(decoding: key, as: UTF8.self)
                    if name.hasPrefix("upgraded:") { found[String(name.dropFirst(9))] = String(decoding: value, as: UTF8.self) }
                    entry = try cursor.next()
                }
            }
            return found
        }
    }

    @Test("the format-1 fixture's upgrade records each step that ran, with its time; the next open runs and records nothing")
    func recordedOnce() throws {
        let dir = TemporaryDirectory()
        let path = dir.sub("l")
        try FileManager.default.copyItem(atPath: Fixture("format1").path + "/ledger", toPath: path)
        #expect(try Self.records(path).isEmpty)
        let first = try Ledger.open(at: path)
        let said = first.upgrades
        first.close()
        let recorded = try Self.records(path)
        #expect(Set(recorded.keys).isSubset(of: LedgerUpgrade.all.map(\.name)))
        #expect(recorded["format-2-indexes"] != nil, "\(recorded)")
        #expect(recorded.values.allSatisfy { Timestamp(rfc3339: $0) != nil })
        #expect(said.first?.hasPrefix("format 1 to 2: the log's indexes rebuilt over 154 events") == true, "\(said)")
        let again = try Ledger.open(at: path)
        #expect(again.upgrades.isEmpty)
        again.close()
        #expect(try Self.records(path) == recorded)
    }

    @Test("a ledger this version creates needs no step: none runs, none is recorded")
    func newLedgerNeedsNone() async throws {
        let dir = TemporaryDirectory()
        let created = try await Ledger.create(
            at: dir.sub("l"), LedgerCreated(teamID: "TEAMAAAAAA", clientIDs: ["com.example"], role: .sender, ledgerID: UUID().uuidString))
        created.close()
        let opened = try Ledger.open(at: dir.sub("l"))
        #expect(opened.upgrades.isEmpty)
        opened.close()
        #expect(try Self.records(dir.sub("l")).isEmpty)
    }
}
