import Ledger

/// The binary layout of a ``UserState`` in the `users` database (format 1).
///
/// `schemas/ledger-format.md` ("users") documents it byte by byte: a version byte, fixed
/// fields, then optional strings (presence byte, u16 length, UTF-8) and optional times
/// (presence byte, i64 µs), all big-endian.
enum UserStateCodec {
    static let version: UInt8 = 1

    static func encode(_ u: UserState) -> [UInt8] {
        var w = BinaryWriter()
        w.bytes.append(version)
        w.u64(u.key)
        w.u64(u.firstSequence)
        w.u64(u.lastSequence)
        w.bytes.append(u.status.rawValue)
        w.bytes.append(u.migratedVia?.rawValue ?? 0)
        w.u32(UInt32(clamping: u.attempts))
        w.u32(UInt32(clamping: u.notifications))
        w.bytes.append(tristate(u.isPrivateEmail))
        w.bytes.append(tristate(u.emailForwarding))
        for s in [u.accountID, u.senderSub, u.transferSub, u.recipientSub, u.targetTeam, u.lastErrorClass, u.lastError, u.email?.keyID, u.email?.combined] {
            w.optionalString(s)
        }
        for t in [u.migratedAt, u.consentRevokedAt, u.accountDeletedAt, u.erasedAt, u.lastAttemptAt, u.migratedRecordedAt] {
            w.optionalTime(t)
        }
        return w.bytes
    }

    static func decode(_ raw: UnsafeRawBufferPointer) throws -> UserState {
        var r = BinaryReader(raw)
        guard try r.u8() == version else { throw LedgerError(.malformedRecord, "users: unknown record version") }
        let key = try r.u64()
        let first = try r.u64()
        let last = try r.u64()
        guard let status = UserStatus(rawValue: try r.u8()) else { throw LedgerError(.malformedRecord, "users: bad status") }
        var u = UserState(key: key, status: status, sequence: first)
        u.lastSequence = last
        u.migratedVia = MigrationPath(rawValue: try r.u8())
        u.attempts = Int(try r.u32())
        u.notifications = Int(try r.u32())
        u.isPrivateEmail = fromTristate(try r.u8())
        u.emailForwarding = fromTristate(try r.u8())
        u.accountID = try r.optionalString()
        u.senderSub = try r.optionalString()
        u.transferSub = try r.optionalString()
        u.recipientSub = try r.optionalString()
        u.targetTeam = try r.optionalString()
        u.lastErrorClass = try r.optionalString()
        u.lastError = try r.optionalString()
        let keyID = try r.optionalString()
        let combined = try r.optionalString()
        if let keyID, let combined { u.email = SealedValue(keyID: keyID, combined: combined) }
        u.migratedAt = try r.optionalTime()
        u.consentRevokedAt = try r.optionalTime()
        u.accountDeletedAt = try r.optionalTime()
        u.erasedAt = try r.optionalTime()
        u.lastAttemptAt = try r.optionalTime()
        // Records written before the field existed end here; a rebuild fills it in.
        u.migratedRecordedAt = r.isAtEnd ? nil : try r.optionalTime()
        return u
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
