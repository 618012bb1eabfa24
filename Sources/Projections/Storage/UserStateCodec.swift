import Ledger

/// The binary layout of a ``UserState`` in the `users` database (format 1).
///
/// `schemas/ledger-format.md` ("users") documents it byte by byte: a version byte, fixed
/// fields, then optional strings (presence byte, u16 length, UTF-8) and optional times
/// (presence byte, i64 µs), all big-endian.
enum UserStateCodec {
    static let version: UInt8 = 1

    /// The fields after the version byte, in stored order: the one statement of the layout,
    /// which both ``encode(_:)`` and ``decode(_:)`` follow.
    private static let fields: [Field] = [
        Field { $0.u64($1.key) } read: { $1.key = try $0.u64() },
        Field { $0.u64($1.firstSequence) } read: { $1.firstSequence = try $0.u64() },
        Field { $0.u64($1.lastSequence) } read: { $1.lastSequence = try $0.u64() },
        Field { $0.bytes.append($1.status.rawValue) } read: { r, u in
            guard let status = UserStatus(rawValue: try r.u8()) else { throw LedgerError(.malformedRecord, "users: bad status") }
            u.status = status
        },
        Field { $0.bytes.append($1.migratedVia?.rawValue ?? 0) } read: { $1.migratedVia = MigrationPath(rawValue: try $0.u8()) },
        Field { $0.u32(UInt32(clamping: $1.attempts)) } read: { $1.attempts = Int(try $0.u32()) },
        Field { $0.u32(UInt32(clamping: $1.notifications)) } read: { $1.notifications = Int(try $0.u32()) },
        Field { $0.bytes.append(tristate($1.isPrivateEmail)) } read: { $1.isPrivateEmail = fromTristate(try $0.u8()) },
        Field { $0.bytes.append(tristate($1.emailForwarding)) } read: { $1.emailForwarding = fromTristate(try $0.u8()) },
        Field { $0.optionalString($1.accountID) } read: { $1.accountID = try $0.optionalString() },
        Field { $0.optionalString($1.senderSub) } read: { $1.senderSub = try $0.optionalString() },
        Field { $0.optionalString($1.transferSub) } read: { $1.transferSub = try $0.optionalString() },
        Field { $0.optionalString($1.recipientSub) } read: { $1.recipientSub = try $0.optionalString() },
        Field { $0.optionalString($1.targetTeam) } read: { $1.targetTeam = try $0.optionalString() },
        Field { $0.optionalString($1.lastErrorClass?.rawValue) } read: { r, u in
            let name = try r.optionalString()
            u.lastErrorClass = try name.map { name in
                guard let kind = Failure.Kind(rawValue: name) else { throw LedgerError(.malformedRecord, "users: unknown failure class") }
                return kind
            }
        },
        Field { $0.optionalString($1.lastError) } read: { $1.lastError = try $0.optionalString() },
        // The sealed email: key ID, then the sealed bytes; both or neither.
        Field { $0.optionalString($1.email?.keyID); $0.optionalString($1.email?.combined) } read: { r, u in
            let keyID = try r.optionalString(), combined = try r.optionalString()
            if let keyID, let combined { u.email = SealedValue(keyID: keyID, combined: combined) }
        },
        Field { $0.optionalTime($1.migratedAt) } read: { $1.migratedAt = try $0.optionalTime() },
        Field { $0.optionalTime($1.consentRevokedAt) } read: { $1.consentRevokedAt = try $0.optionalTime() },
        Field { $0.optionalTime($1.accountDeletedAt) } read: { $1.accountDeletedAt = try $0.optionalTime() },
        Field { $0.optionalTime($1.erasedAt) } read: { $1.erasedAt = try $0.optionalTime() },
        Field { $0.optionalTime($1.lastAttemptAt) } read: { $1.lastAttemptAt = try $0.optionalTime() },
        // Records written before the field existed end here; a rebuild fills it in.
        Field { $0.optionalTime($1.migratedRecordedAt) } read: { r, u in u.migratedRecordedAt = r.isAtEnd ? nil : try r.optionalTime() },
    ]

    static func encode(_ u: UserState) -> [UInt8] {
        var w = BinaryWriter()
        w.bytes.append(version)
        for field in fields { field.write(&w, u) }
        return w.bytes
    }

    static func decode(_ raw: UnsafeRawBufferPointer) throws -> UserState {
        var r = BinaryReader(raw)
        guard try r.u8() == version else { throw LedgerError(.malformedRecord, "users: unknown record version") }
        var u = UserState(key: 0, status: .pending, sequence: 0)
        for field in fields { try field.read(&r, &u) }
        return u
    }

    /// One stored field: how it is written and read back.
    private struct Field: Sendable {
        let write: @Sendable (inout BinaryWriter, UserState) -> Void
        let read: @Sendable (inout BinaryReader, inout UserState) throws -> Void

        init(_ write: @escaping @Sendable (inout BinaryWriter, UserState) -> Void, read: @escaping @Sendable (inout BinaryReader, inout UserState) throws -> Void) {
            self.write = write
            self.read = read
        }
    }

    private static func tristate(_ b: Bool?) -> UInt8 { b.map { $0 ? 2 : 1 } ?? 0 }
    private static func fromTristate(_ v: UInt8) -> Bool? { v == 0 ? nil : v == 2 }
}

/// Appends big-endian fields to a byte buffer.
struct BinaryWriter {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(192) }

    mutating func u64(_ v: UInt64) { BigEndian.append(v, to: &bytes) }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }
    mutating func optionalString(_ s: String?) {
        guard let s else { bytes.append(0); return }
        let utf8 = Array(s.utf8.prefix(Int(UInt16.max)))
        bytes.append(1)
        withUnsafeBytes(of: UInt16(utf8.count).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: utf8)
    }
    mutating func optionalTime(_ t: Timestamp?) {
        guard let t else { bytes.append(0); return }
        bytes.append(1)
        u64(UInt64(bitPattern: t.microseconds))
    }
}

/// Reads what ``BinaryWriter`` wrote, failing on truncation.
struct BinaryReader {
    let raw: UnsafeRawBufferPointer
    var offset = 0

    init(_ raw: UnsafeRawBufferPointer) { self.raw = raw }

    var isAtEnd: Bool { offset == raw.count }

    private mutating func take(_ n: Int) throws -> UnsafeRawBufferPointer {
        guard offset + n <= raw.count else { throw LedgerError(.malformedRecord, "projection record is truncated") }
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + n)])
    }

    mutating func u8() throws -> UInt8 { try take(1)[0] }
    mutating func u64() throws -> UInt64 { BigEndian.uint64(try take(8)) }
    mutating func u32() throws -> UInt32 {
        let b = try take(4)
        return UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
    }
    mutating func optionalString() throws -> String? {
        guard try u8() == 1 else { return nil }
        let b = try take(2)
        let n = Int(b[0]) << 8 | Int(b[1])
        return String(decoding: try take(n), as: UTF8.self)
    }
    mutating func optionalTime() throws -> Timestamp? {
        guard try u8() == 1 else { return nil }
        return Timestamp(microseconds: Int64(bitPattern: try u64()))
    }
}
