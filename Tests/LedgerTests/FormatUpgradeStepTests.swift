import Foundation
import LMDB
import LogEngine
import TestSupport
import Testing

@testable import Ledger

/// The format-1 fixture (`Tests/Fixtures/format1`, written by the code before format 2)
/// upgraded in small steps, stopped between them as a kill would stop it.
@Suite("format 1 upgraded in steps")
struct FormatUpgradeStepTests {
    static let fixture = Fixture("format1").path + "/ledger"

    @Test("an upgrade stopped between transactions leaves a whole format-1 ledger, and the next open finishes it with exact indexes")
    func stoppedBetweenSteps() throws {
        let dir = TemporaryDirectory()
        let path = dir.sub("l")
        try FileManager.default.copyItem(atPath: FormatUpgradeStepTests.fixture, toPath: path)
        struct Stopped: Error {}
        for (stopAfter, indexed) in [(1, UInt64(7)), (5, 42)] {
            let environment = try Environment(path: path)
            var steps = 0
            #expect(throws: Stopped.self) {
                try FormatUpgrade.run(on: environment, chunk: 7) { _ in
                    steps += 1
                    if steps == stopAfter { throw Stopped() }
                }
            }
            // Still format 1, its old indexes whole, the new ones as far as the progress says.
            let (format, progress, oldTypeEntries) = try environment.read { txn in
                let meta = try txn.openDatabase("meta", create: false)
                return (
                    try txn.get(meta, key: LedgerSchema.formatKey).map { String(decoding: $0, as: UTF8.self) },
                    try txn.get(meta, key: LedgerSchema.upgradeKey).map { try BigEndian.uint64($0) },
                    try txn.count(try txn.openDatabase("idx_type", create: false))
                )
            }
            #expect(format == LedgerSchema.format1Marker)
            #expect(progress == indexed, "each run continues from where the last one stopped")
            #expect(oldTypeEntries == 154)
        }
        let ledger = try Ledger.open(at: path)
        defer { ledger.close() }
        #expect(try ledger.verify().isIntact)
        var events: [RecordedEvent] = []
        try ledger.read { view in try view.forEachEvent(from: 1, through: try view.head().sequence) { events.append($0) } }
        #expect(events.count == 154)
        try ledger.read { view throws in
            #expect(try view.transaction.get(view.schema.meta, key: LedgerSchema.upgradeKey) == nil)
            for name in LedgerSchema.format1IndexNames {
                #expect(throws: LMDBError.self, "\(name) is dropped") { try view.transaction.openDatabase(name, create: false) }
            }
            for type in EventType.allCases {
                #expect(try view.sequences(of: type) == events.filter { $0.type == type }.map(\.sequence), "\(type)")
            }
            for event in events {
                #expect(try view.lastSequence(recordedAtOrBefore: event.recordedAt) == events.last { $0.recordedAt <= event.recordedAt }!.sequence)
                if let key = event.idempotencyKey { #expect(try view.sequence(forIdempotencyKey: key) == event.sequence) }
            }
        }
    }
}
