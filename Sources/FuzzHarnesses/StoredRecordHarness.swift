import Basics
import Foundation
import LMDB
import Ledger
import Projections
import Reporting

#if canImport(Glibc)
import Glibc
#endif

extension Harness {
    /// An auditor's copy altered anywhere: one stored entry of team B's fixture ledger (a log
    /// record, an index entry, a user record, a link, the window, the key store's entries, a
    /// key slot) is replaced, re-keyed, removed or joined by a new one, then the copy is read
    /// as the read-only commands read it: `verify`, every `query`, `query user`, `query events`,
    /// `report`, and with the input's first flag `verify --deep`. Whatever they find, they
    /// must say so, never trap.
    ///
    /// Input: two bytes choosing the entry, a byte of mode (bits 0–1: replace the value,
    /// replace the key, remove, add; bits 2–3: the ledger, the key store, the key slots file;
    /// bit 7: deep verify), then the new bytes (for an addition, key and value parted by the
    /// `~~~~` line).
    static let storedRecord = Harness(
        "stored-record", "an auditor's copy with one stored entry altered, read by verify, query, report (and verify --deep)"
    ) { input in
        guard input.count >= 3 else { throw HarnessRefusal() }
        let copy = StoredRecordCopy.shared
        let choice = Int(input[0]) << 8 | Int(input[1])
        let mode = input[2]
        let payload = Array(input[3...])
        let change: StoredRecordCopy.Change
        switch mode >> 2 & 3 {
        case 2: change = .slot(index: choice, bytes: payload)
        case let store: change = .entry(keyStore: store == 1, choice: choice, mode: mode & 3, payload: payload)
        }
        try copy.altered(change) { ledger, projection in
            _ = try? ledger.verify()
            try? StoredRecordCopy.readEverything(ledger, projection)
            if mode & 0x80 != 0 {
                _ = try? ProjectionAudit.run(ledger: ledger, projection: projection, scratch: FuzzWorkspace.fresh("stored-record-scratch"))
            }
        }
    }
}

/// The fixture recipient ledger copied into the workspace, altered one entry at a time and put
/// back after each input.
final class StoredRecordCopy: Sendable {
    static let shared = StoredRecordCopy()

    /// One alteration.
    enum Change {
        /// An LMDB entry of the ledger or its key store: `mode` 0 replaces the value, 1 the key,
        /// 2 removes the entry, 3 adds a new one.
        case entry(keyStore: Bool, choice: Int, mode: UInt8, payload: [UInt8])
        /// 64 bytes (or fewer) written over key slot `index` of `keys/slots`.
        case slot(index: Int, bytes: [UInt8])
    }

    /// A stored entry: its environment's path, its database, key and value.
    struct Entry: Sendable {
        let environment: String
        let database: String
        let key: [UInt8]
        let value: [UInt8]
    }

    let directory: String
    private let ledgerEntries: [Entry]
    private let keyStoreEntries: [Entry]

    private init() {
        directory = FuzzWorkspace.copy(fixture: "recipient", as: "stored-record")
        do {
            ledgerEntries = try StoredRecordCopy.entries(in: directory)
            keyStoreEntries = try StoredRecordCopy.entries(in: directory + "/keys")
        } catch { fatalError("cannot read the fixture recipient: \(error)") }
    }

    private static func entries(in path: String) throws -> [Entry] {
        let environment = try Environment(path: path)
        return try environment.read { txn in
            try txn.databaseNames().flatMap { name in
                let database = try txn.openDatabase(name, create: false)
                return try txn.withCursor(database) { cursor in
                    var entries: [Entry] = []
                    var entry = try cursor.first()
                    while let (key, value) = entry {
                        entries.append(Entry(environment: path, database: name, key: Array(key), value: Array(value)))
                        entry = try cursor.next()
                    }
                    return entries
                }
            }
        }
    }

    /// Makes `change`, runs `read` on the ledger opened read-only, and undoes the change.
    func altered(_ change: Change, _ read: (Ledger, UserProjection) throws -> Void) throws {
        let undo: () throws -> Void
        switch change {
        case .entry(let keyStore, let choice, let mode, let payload):
            let entries = keyStore ? keyStoreEntries : ledgerEntries
            guard !entries.isEmpty else { throw HarnessRefusal() }
            let entry = entries[choice % entries.count]
            let parts = FuzzInput(payload, parts: 2)
            let (newKey, newValue): ([UInt8]?, [UInt8]?) =
                switch mode {
                case 0: (entry.key, payload)
                case 1: (payload, entry.value)
                case 2: (nil, nil)
                default: (parts[0], parts[1])
                }
            let removesOld = mode != 3
            var written = newValue
            try StoredRecordCopy.write(entry) { txn, database in
                // All values of a key in a database of fixed-size duplicates have one size, in
                // LMDB's pages as in any copy of them: a value of another size is not a copy's.
                if try txn.flags(of: database).contains(.duplicateFixed), let value = written {
                    written = Array(value.prefix(entry.value.count)) + [UInt8](repeating: 0, count: max(0, entry.value.count - value.count))
                }
                if removesOld { _ = try txn.delete(database, key: entry.key, value: entry.value) }
                if let newKey, let written { try txn.put(database, key: newKey, value: written) }
            }
            undo = {
                try StoredRecordCopy.write(entry) { txn, database in
                    if let newKey, let written { _ = try txn.delete(database, key: newKey, value: written) }
                    if removesOld { try txn.put(database, key: entry.key, value: entry.value) }
                }
            }
        case .slot(let index, let bytes):
            let path = directory + "/keys/slots"
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            let slots = max(1, size / 64)
            let offset = off_t(index % (slots + 1)) * 64
            let old = StoredRecordCopy.pread(path, offset: offset, count: 64)
            StoredRecordCopy.pwrite(path, Array(bytes.prefix(64)), offset: offset)
            undo = {
                StoredRecordCopy.pwrite(path, old, offset: offset)
                if size < Int(offset) + 64 { _ = truncate(path, off_t(size)) }
            }
        }
        defer {
            do { try undo() } catch { fatalError("the fixture copy could not be put back: \(error)") }
        }
        let projection = UserProjection()
        let ledger: Ledger
        do { ledger = try Ledger.open(at: directory, folders: [projection], options: Ledger.Options(access: .readOnly)) } catch {
            return  // the copy is refused at open: what a reader must do with some alterations
        }
        defer { ledger.close() }
        try read(ledger, projection)
    }

    /// Every answer the read-only commands give, in every format, thrown away.
    static func readEverything(_ ledger: Ledger, _ projection: UserProjection) throws {
        let discard = RowWriter(.csv) { (_: String) in }
        try projection.read(ledger) { snapshot, view in
            let queries = ComplianceQueries(snapshot: snapshot, time: Timestamp(seconds: 1_790_000_000), sealer: ledger.sealer)
            try? queries.state(into: discard)
            try? queries.migrated(into: discard)
            try? queries.pending(into: discard)
            try? queries.failures(into: discard)
            try? queries.failuresByClass(into: discard)
            try? queries.unmatched(into: discard)
            try? queries.window(into: discard)
            var identifiers: [String] = []
            try? queries.forEachMigrated { row in identifiers += row.state.identifiers.prefix(2).map(\.value) }
            for identifier in identifiers.prefix(6) {
                if let user = try? queries.user(identifier), let last = try? snapshot.checkpoint() {
                    let history = try? EventQuery.historyWithBatches(of: user.state, through: last, snapshot: snapshot, view: view)
                    _ = Answers.events.table(history ?? []).render(.table)
                }
            }
        }
        try? EventQuery().write(in: ledger, projection: projection, into: discard)
        // `prove`, as an auditor asks it of the latest checkpoint: the first, a middle and the last event.
        if let checkpoint = try? ledger.latestCheckpoint() {
            for sequence in Set([1, checkpoint.treeSize / 2, checkpoint.treeSize]) where sequence > 0 {
                _ = try? ledger.prove(sequence, against: checkpoint)
            }
        }
        if let report = try? MigrationReport.make(ledger: ledger, projection: projection, asOf: nil) {
            _ = report.text
            _ = report.html
            _ = report.json
        }
    }

    private static func write(_ entry: Entry, _ body: (WriteTransaction, Database) throws -> Void) throws {
        let environment = try Environment(path: entry.environment)
        try environment.write { txn in try body(txn, txn.openDatabase(entry.database, create: false)) }
    }

    private static func pread(_ path: String, offset: off_t, count: Int) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { Glibc.pread(fd, $0.baseAddress, count, offset) }
        return Array(bytes.prefix(max(0, n)))
    }

    private static func pwrite(_ path: String, _ bytes: [UInt8], offset: off_t) {
        let fd = open(path, O_WRONLY)
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { Glibc.pwrite(fd, $0.baseAddress, $0.count, offset) }
    }
}
