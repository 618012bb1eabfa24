import Foundation
import Intake
import Ledger
import Projections
import TestSupport
import Testing

/// Which files under a directory hold a byte string: how a person with a hex editor would
/// look for a destroyed key.
enum FileSearch {
    /// Paths of the regular files under `directory` (at any depth) whose bytes contain `needle`.
    static func files(under directory: String, containing needle: [UInt8]) -> [String] {
        let fm = FileManager.default
        guard let names = fm.subpaths(atPath: directory) else { return [] }
        return names.sorted().compactMap { name in
            let path = directory + "/" + name
            guard (try? fm.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeRegular,
                let data = fm.contents(atPath: path)
            else { return nil }
            return data.range(of: Data(needle)) == nil ? nil : name
        }
    }
}

@Suite("Erasure leaves nothing")
struct ErasureTests {
    @Test(
        "100 users erased, by erase and by account-deleted: their keys' 32 bytes are in no file under the ledger or a backup taken afterwards; both held them before"
    )
    func destroyedKeysAreGone() async throws {
        let f = try await IntakeFixture()
        let ledgerDirectory = f.dir.sub("ledger")
        let erased = (0..<100).map { "B.erase.\($0)" }
        let kept = (0..<10).map { "B.keep.\($0)" }
        for sub in erased + kept {
            let claims = try f.notificationClaims(type: "email-enabled", sub: sub, email: "\(sub)@privaterelay.appleid.com")
            let receipt = try await f.intake.receiveNotification(IntakeFixture.body(try IntakeFixture.signed(claims)))
            #expect(receipt.rejection == nil)
        }
        func keyBytes(_ sub: String) throws -> [UInt8] {
            try f.ledger.sealer.requireKeyStore().dataKey(for: Identifier(.recipientSub, sub)).key.withUnsafeBytes { Array($0) }
        }
        let erasedKeys = try erased.map(keyBytes)
        let keptKeys = try kept.map(keyBytes)

        // The search finds keys where they are: in the ledger and in a backup taken before.
        _ = try LedgerBackup.take(of: f.ledger, to: f.dir.sub("backup-before"), includeKeys: true)
        for key in erasedKeys + keptKeys {
            #expect(!FileSearch.files(under: ledgerDirectory, containing: key).isEmpty)
            #expect(!FileSearch.files(under: f.dir.sub("backup-before"), containing: key).isEmpty)
        }

        let eraser = UserEraser(ledger: f.ledger, projection: f.projection)
        for sub in erased.prefix(50) {
            #expect(try await eraser.erase(holding: Identifier(.recipientSub, sub), reason: "erase requested by support")?.alreadyErased == false)
        }
        for sub in erased.dropFirst(50) {
            let receipt = try await f.intake.receiveNotification(
                IntakeFixture.body(try IntakeFixture.signed(try f.notificationClaims(type: "account-deleted", sub: sub))))
            #expect(receipt.erased, "\(sub) erased by its account-deleted notification")
        }
        _ = try LedgerBackup.take(of: f.ledger, to: f.dir.sub("backup-after"), includeKeys: true)
        for (sub, key) in zip(erased, erasedKeys) {
            #expect(
                FileSearch.files(under: ledgerDirectory, containing: key).isEmpty,
                "\(sub)'s key is still in \(FileSearch.files(under: ledgerDirectory, containing: key))")
            #expect(
                FileSearch.files(under: f.dir.sub("backup-after"), containing: key).isEmpty, "\(sub)'s key is in the backup taken after its erasure")
        }
        for key in keptKeys {
            #expect(FileSearch.files(under: ledgerDirectory, containing: key) == ["keys/slots"])
            #expect(FileSearch.files(under: f.dir.sub("backup-after"), containing: key) == ["keys/slots"])
        }
        #expect(try f.ledger.verify().isIntact)
    }
}
