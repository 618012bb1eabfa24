import LMDB

/// The named databases of a ledger environment and the layout of their keys.
///
/// `schemas/ledger-format.md` documents every byte; this type is the one place that builds
/// those keys.
public struct LedgerSchema: Sendable {
    /// The format marker stored under `meta["format"]`.
    public static let formatMarker = "handover-ledger/1"

    /// `format` and `head` (last sequence, chain hash, recorded time).
    public let meta: Database
    /// Sequence (8 bytes, big-endian) → chain hash (32 bytes) ‖ event JSON.
    public let log: Database
    /// Identifier tag ‖ value ‖ 0x00 ‖ sequence → empty.
    public let byIdentifier: Database
    /// Type name ‖ 0x00 ‖ sequence → empty.
    public let byType: Database
    /// Recorded time (µs, 8 bytes big-endian) ‖ sequence → empty.
    public let byTime: Database
    /// Idempotency key → sequence.
    public let idempotency: Database
    /// Stored Merkle tree nodes: last leaf index (8 bytes, big-endian) ‖ level → 32-byte hash.
    public let merkle: Database
    /// Signed checkpoints: tree size (8 bytes, big-endian) → the checkpoint note's bytes.
    public let checkpoints: Database

    /// The databases every ledger has had since format 1.
    static let names = ["meta", "log", "idx_identifier", "idx_type", "idx_time", "idempotency"]
    /// The audit-evidence databases, added to a ledger without them when it is opened.
    static let auditNames = ["merkle", "checkpoints"]

    init(_ databases: [Database]) {
        meta = databases[0]
        log = databases[1]
        byIdentifier = databases[2]
        byType = databases[3]
        byTime = databases[4]
        idempotency = databases[5]
        merkle = databases[6]
        checkpoints = databases[7]
    }

    static let formatKey = Array("format".utf8)
    static let headKey = Array("head".utf8)
    static let merkleKey = Array("merkle".utf8)

    /// The log key of a sequence number.
    @inline(__always)
    public static func logKey(_ sequence: UInt64) -> [UInt8] { BigEndian.bytes(sequence) }

    /// The prefix of every index key of `identifier` (tag ‖ value ‖ 0x00).
    public static func identifierPrefix(_ identifier: Identifier) -> [UInt8] {
        var key = identifier.indexKey
        key.append(0)
        return key
    }

    /// The prefix of every index key of `type` (name ‖ 0x00).
    public static func typePrefix(_ type: EventType) -> [UInt8] {
        var key = Array(type.rawValue.utf8)
        key.append(0)
        return key
    }

    /// The `merkle` database key of a stored node: the index of its last leaf (8 bytes,
    /// big-endian) ‖ its level (1 byte). Nodes complete in this order, so keys only grow.
    public static func merkleNodeKey(level: Int, index: UInt64) -> [UInt8] {
        var key = BigEndian.bytes(((index + 1) << UInt64(level)) - 1)
        key.append(UInt8(level))
        return key
    }

    /// The time-index key of an event.
    public static func timeKey(_ time: Timestamp, _ sequence: UInt64) -> [UInt8] {
        var key = BigEndian.bytes(UInt64(bitPattern: time.microseconds))
        BigEndian.append(sequence, to: &key)
        return key
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

    var encoded: [UInt8] {
        var bytes = BigEndian.bytes(sequence)
        bytes.append(contentsOf: hash)
        BigEndian.append(UInt64(bitPattern: recordedAt.microseconds), to: &bytes)
        return bytes
    }

    init(sequence: UInt64, hash: [UInt8], recordedAt: Timestamp) {
        self.sequence = sequence
        self.hash = hash
        self.recordedAt = recordedAt
    }

    init?(encoded raw: UnsafeRawBufferPointer) {
        guard raw.count == 48 else { return nil }
        sequence = BigEndian.uint64(raw, at: 0)
        hash = Array(raw[8..<40])
        recordedAt = Timestamp(microseconds: Int64(bitPattern: BigEndian.uint64(raw, at: 40)))
    }
}
