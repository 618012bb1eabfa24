import Basics
import LMDB

/// The named databases of a ledger environment (format 3) and the layout of their keys.
///
/// `schemas/ledger-format.md` documents every byte; this type is the one place that builds
/// those keys.
public struct LedgerSchema: Sendable {
    /// The format marker stored under `meta["format"]`.
    public static let formatMarker = "handover-ledger/3"
    /// The marker of format 2, which differs from format 3 only in lacking the `rows` database:
    /// any writable open adds it and writes the new marker.
    package static let format2Marker = "handover-ledger/2"
    /// The marker of format 1, which `handover upgrade` (any writable open) upgrades in place
    /// (``FormatUpgrade``).
    package static let format1Marker = "handover-ledger/1"

    /// `format`, `head` (last sequence, chain hash, recorded time) and `merkle` (the tree's edge).
    public let meta: Database
    /// Sequence (8 bytes, big-endian) → chain hash (32 bytes) ‖ event JSON.
    public let log: Database
    /// Stored Merkle tree nodes: last leaf index (8 bytes, big-endian) ‖ level → 32-byte hash.
    public let merkle: Database
    /// Signed checkpoints: tree size (8 bytes, big-endian) → the checkpoint note's bytes.
    public let checkpoints: Database
    /// The rows of batch events that commit to them by a Merkle root: sequence (8 bytes,
    /// big-endian) ‖ row index (4 bytes, big-endian) → the row's bytes. Nil in a ledger of an
    /// older format read as it is, which has no such events.
    public let rows: Database?
    /// The person index (schemas/audit-evidence.md, "Person index"): `R` → the size indexed (8
    /// bytes, big-endian) ‖ the root's side (34 bytes; absent while empty), `H` ‖ label → a
    /// name's history (40 bytes), `N` ‖ depth ‖ prefix → a branch (100 bytes). Nil in a ledger
    /// read as it is from before the index, which `handover upgrade` builds it in.
    public let personIndex: Database?
    /// The format-2 indexes; nil in a format-1 ledger opened read-only, whose indexes are
    /// format 1's until `handover upgrade` rebuilds them.
    private let indexes: LogIndexes?

    /// The format-2 index databases.
    private struct LogIndexes: Sendable {
        package let byType: Database
        package let byTime: Database
        package let idempotency: Database
    }

    /// Type name → the sequences of its events, ascending (8 bytes each, several per key).
    public var byType: Database { get throws { try formatTwoIndexes().byType } }
    /// Recorded time (µs, 8 bytes big-endian) → the last sequence recorded at that time.
    public var byTime: Database { get throws { try formatTwoIndexes().byTime } }
    /// Idempotency key hash (8 bytes) → the sequence holding the key (several on a collision).
    public var idempotency: Database { get throws { try formatTwoIndexes().idempotency } }
    /// Whether the log's format-2 indexes are there (not in a format-1 ledger read as it is).
    public var hasIndexes: Bool { indexes != nil }

    private func formatTwoIndexes() throws -> LogIndexes {
        guard let indexes else { throw LedgerError(.needsUpgrade, "its log indexes are format 1's") }
        return indexes
    }

    /// The databases of format 2 and their flags.
    package static let databases: [(name: String, flags: Database.Flags)] = [
        ("meta", []), ("log", []),
        ("type_index", [.duplicateSort, .duplicateFixed]), ("time_index", []),
        ("idempotency_index", [.duplicateSort, .duplicateFixed]),
        ("merkle", []), ("checkpoints", []), ("rows", []), ("person_index", []),
    ]
    /// The index databases of format 1, dropped once their successors are built.
    package static let format1IndexNames = ["idx_identifier", "idx_type", "idx_time", "idempotency"]
    /// The audit-evidence databases, added to a ledger without them when it is opened.
    package static let auditNames = ["merkle", "checkpoints"]

    /// Opens every database of format 2 in `transaction`, creating them when asked.
    package static func open(in transaction: ReadTransaction, create: Bool) throws -> LedgerSchema {
        func database(_ name: String) throws -> Database {
            let flags = databases.first { $0.name == name }?.flags ?? []
            return try transaction.openDatabase(name, flags: flags, create: create)
        }
        func optional(_ name: String) throws -> Database? {
            do { return try database(name) } catch let error as LMDBError where error.code == .notFound { return nil }
        }
        let rows = try optional("rows")
        return LedgerSchema(
            meta: try database("meta"), log: try database("log"), merkle: try database("merkle"), checkpoints: try database("checkpoints"),
            rows: rows, personIndex: try optional("person_index"),
            indexes: LogIndexes(
                byType: try database("type_index"), byTime: try database("time_index"), idempotency: try database("idempotency_index")))
    }

    /// The databases of either format, for reading the log as it is (a copy's head): format
    /// 2's, or format 1's where the ledger is not upgraded yet.
    package static func openEitherFormat(in transaction: ReadTransaction) throws -> LedgerSchema {
        do { return try open(in: transaction, create: false) } catch let error as LMDBError where error.code == .notFound {
            return try openFormat1(in: transaction)
        }
    }

    /// Opens the databases a format-1 ledger shares with format 2 (the log, its Merkle tree and
    /// checkpoints), for reading it as it is: enough to verify and prove, not to answer queries.
    package static func openFormat1(in transaction: ReadTransaction) throws -> LedgerSchema {
        LedgerSchema(
            meta: try transaction.openDatabase("meta", create: false), log: try transaction.openDatabase("log", create: false),
            merkle: try transaction.openDatabase("merkle", create: false), checkpoints: try transaction.openDatabase("checkpoints", create: false),
            rows: nil, personIndex: nil, indexes: nil)
    }

    private init(
        meta: Database, log: Database, merkle: Database, checkpoints: Database, rows: Database?, personIndex: Database?, indexes: LogIndexes?
    ) {
        self.meta = meta
        self.log = log
        self.merkle = merkle
        self.checkpoints = checkpoints
        self.rows = rows
        self.personIndex = personIndex
        self.indexes = indexes
    }

    package static let formatKey = Array("format".utf8)
    package static let headKey = Array("head".utf8)
    package static let merkleKey = Array("merkle".utf8)
    /// While a format-1 ledger is being upgraded: the last sequence its new indexes cover.
    package static let upgradeKey = Array("upgrade".utf8)

    /// The log key of a sequence number.
    @inline(__always)
    public static func logKey(_ sequence: UInt64) -> [UInt8] { BigEndian.bytes(sequence) }

    /// The `type_index` key of the event type named `typeName`: the name in ASCII.
    public static func typeKey(_ typeName: String) -> [UInt8] { Array(typeName.utf8) }

    /// The `idempotency_index` key of an idempotency key: the first 8 bytes of SHA-256 of its
    /// UTF-8. Two keys may share a hash; the event's own `idempotency_key` decides.
    public static func idempotencyHash(_ key: String) -> [UInt8] {
        BigEndian.bytes(Array(key.utf8).withUnsafeBytes { idempotencyHash(utf8: $0) })
    }

    /// ``idempotencyHash(_:)`` of a key's UTF-8 bytes, read as a big-endian integer (so that
    /// integer order is the index's byte order).
    package static func idempotencyHash(utf8 key: UnsafeRawBufferPointer) -> UInt64 {
        SHA256Hash(hashing: UnsafeRawBufferPointer(start: nil, count: 0), key).withUnsafeBytes {
            UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self))
        }
    }

    /// The `merkle` database key of a stored node: the index of its last leaf (8 bytes,
    /// big-endian) ‖ its level (1 byte). Nodes complete in this order, so keys only grow.
    public static func merkleNodeKey(level: Int, index: UInt64) -> [UInt8] {
        var key = BigEndian.bytes(((index + 1) << UInt64(level)) - 1)
        key.append(UInt8(level))
        return key
    }

    /// The `rows` key of row `index` of event `sequence`.
    public static func rowKey(_ sequence: UInt64, _ index: Int) -> [UInt8] {
        var key = BigEndian.bytes(sequence)
        key.append(contentsOf: withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) })
        return key
    }

    /// The event's sequence number and the row's index a `rows` key holds; a ``LedgerError``
    /// when it is not 12 bytes.
    public static func rowKeyParts(_ key: UnsafeRawBufferPointer) throws -> (sequence: UInt64, index: Int) {
        guard key.count == 12 else { throw LedgerError(.malformedRecord, "a rows key has \(key.count) bytes, not 12") }
        return (try BigEndian.uint64(key), key[8..<12].reduce(0) { $0 << 8 | Int($1) })
    }

    /// The `time_index` key of a recorded time.
    public static func timeKey(_ time: Timestamp) -> [UInt8] {
        BigEndian.bytes(UInt64(bitPattern: time.microseconds))
    }
}

/// The last event of the log: its sequence number, chain hash and recorded time.
public struct ChainHead: Equatable, Sendable {
    public var sequence: UInt64
    /// `hash(sequence)`; 32 zero bytes before the first event.
    public var hash: [UInt8]
    public var recordedAt: Timestamp

    /// The head of an empty log.
    public static let genesis = ChainHead(sequence: 0, hash: [UInt8](repeating: 0, count: 32), recordedAt: Timestamp(microseconds: 0))

    /// An event's chain hash: SHA-256 of the chain hash before it ‖ its event JSON.
    package static func hash(after previous: UnsafeRawBufferPointer, json: UnsafeRawBufferPointer) -> SHA256Hash {
        SHA256Hash(hashing: previous, json)
    }

    package var encoded: [UInt8] {
        var bytes = BigEndian.bytes(sequence)
        bytes.append(contentsOf: hash)
        BigEndian.append(UInt64(bitPattern: recordedAt.microseconds), to: &bytes)
        return bytes
    }

    package init(sequence: UInt64, hash: [UInt8], recordedAt: Timestamp) {
        self.sequence = sequence
        self.hash = hash
        self.recordedAt = recordedAt
    }

    package init?(encoded raw: UnsafeRawBufferPointer) {
        guard raw.count == 48, let time = try? BigEndian.uint64(raw, at: 40),
            let recordedAt = Timestamp(checkedMicroseconds: Int64(bitPattern: time)),
            // Events are numbered below 2^63 (their JSON's `seq`), so the next one always has a number.
            let sequence = try? BigEndian.uint64(raw, at: 0), sequence < UInt64(Int64.max)
        else { return nil }
        self.sequence = sequence
        hash = Array(raw[8..<40])
        self.recordedAt = recordedAt
    }
}
