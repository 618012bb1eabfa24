import Ledger

/// The binary layout of a ``UserState`` in `user_versions` (user record version 1, the value
/// projection layout 1's `users` database held).
///
/// `schemas/ledger-format.md` ("Projection values") documents it byte by byte: a version
/// byte, fixed fields, then optional strings (presence byte, u16 length, UTF-8) and optional
/// times (presence byte, i64 µs), all big-endian.
enum UserStateCodec {
    static let version: UInt8 = 1

    static func encode(_ u: UserState) -> [UInt8] {
        var writer = BinaryWriter()
        writer.bytes.append(version)
        var u = u
        do { try fields(&writer, &u) } catch { preconditionFailure("writing a user state cannot fail: \(error)") }
        return writer.bytes
    }

    static func decode(_ raw: UnsafeRawBufferPointer) throws -> UserState {
        var reader = BinaryReader(raw)
        guard try reader.u8() == version else { throw LedgerError(.malformedRecord, "users: unknown record version") }
        var u = UserState(key: 0, status: .pending, sequence: 0)
        try fields(&reader, &u)
        return u
    }

    /// The fields after the version byte, in stored order: the one statement of the layout,
    /// which ``encode(_:)`` runs with a writer (each call writes the value) and ``decode(_:)``
    /// with a reader (each call reads it into `u`). Generic, so that both are straight-line
    /// code: a million users are decoded per listing.
    private static func fields<Coder: FieldCoder>(_ c: inout Coder, _ u: inout UserState) throws {
        try c.u64(&u.key)
        try c.u64(&u.firstSequence)
        try c.u64(&u.lastSequence)
        // A field stored in another form than the state's is converted back only when reading.
        var status = u.status.rawValue
        try c.u8(&status)
        if Coder.isReading {
            guard let decodedStatus = UserStatus(rawValue: status) else { throw LedgerError(.malformedRecord, "users: bad status") }
            u.status = decodedStatus
        }
        var via = u.migratedVia?.rawValue ?? 0
        try c.u8(&via)
        if Coder.isReading { u.migratedVia = MigrationPath(rawValue: via) }
        try c.u32(&u.attempts)
        try c.u32(&u.notifications)
        try c.tristate(&u.isPrivateEmail)
        try c.tristate(&u.emailForwarding)
        try c.optionalString(&u.accountID)
        try c.optionalString(&u.senderSub)
        try c.optionalString(&u.transferSub)
        try c.optionalString(&u.recipientSub)
        try c.optionalString(&u.targetTeam)
        var errorClass = u.lastErrorClass?.rawValue
        try c.optionalString(&errorClass)
        if Coder.isReading {
            u.lastErrorClass = try errorClass.map { name in
                guard let kind = Failure.Kind(rawValue: name) else { throw LedgerError(.malformedRecord, "users: unknown failure class") }
                return kind
            }
        }
        try c.optionalString(&u.lastError)
        // The sealed email: key ID, then the sealed bytes; both or neither.
        var keyID = u.email?.keyID, combined = u.email?.combined
        try c.optionalString(&keyID)
        try c.optionalString(&combined)
        if Coder.isReading { u.email = keyID.flatMap { keyID in combined.map { SealedValue(keyID: keyID, combined: $0) } } }
        try c.optionalTime(&u.migratedAt)
        try c.optionalTime(&u.consentRevokedAt)
        try c.optionalTime(&u.accountDeletedAt)
        try c.optionalTime(&u.erasedAt)
        try c.optionalTime(&u.lastAttemptAt)
        // Records written before the field existed end here; a rebuild fills it in.
        try c.trailingOptionalTime(&u.migratedRecordedAt)
    }
}

/// What ``UserStateCodec``'s layout is run with: a writer, which writes each value, or a
/// reader, which reads each value into its place.
protocol FieldCoder {
    /// Whether the coder reads values into the state (else it writes them from it).
    static var isReading: Bool { get }
    mutating func u8(_ v: inout UInt8) throws
    mutating func u32(_ v: inout Int) throws
    mutating func u64(_ v: inout UInt64) throws
    /// An optional Boolean as one byte: 0 absent, 1 false, 2 true.
    mutating func tristate(_ v: inout Bool?) throws
    mutating func optionalString(_ v: inout String?) throws
    mutating func optionalTime(_ v: inout Timestamp?) throws
    /// An optional time a record may end before (a field added later).
    mutating func trailingOptionalTime(_ v: inout Timestamp?) throws
}

extension BinaryWriter: FieldCoder {
    static var isReading: Bool { false }
    mutating func u8(_ v: inout UInt8) { bytes.append(v) }
    mutating func u32(_ v: inout Int) { u32(UInt32(clamping: v)) }
    mutating func u64(_ v: inout UInt64) { u64(v) }
    mutating func tristate(_ v: inout Bool?) { bytes.append(v.map { $0 ? 2 : 1 } ?? 0) }
    mutating func optionalString(_ v: inout String?) { optionalString(v) }
    mutating func optionalTime(_ v: inout Timestamp?) { optionalTime(v) }
    mutating func trailingOptionalTime(_ v: inout Timestamp?) { optionalTime(v) }
}

extension BinaryReader: FieldCoder {
    static var isReading: Bool { true }
    mutating func u8(_ v: inout UInt8) throws { v = try u8() }
    mutating func u32(_ v: inout Int) throws { v = Int(try u32()) }
    mutating func u64(_ v: inout UInt64) throws { v = try u64() }
    mutating func tristate(_ v: inout Bool?) throws {
        let byte = try u8()
        v = byte == 0 ? nil : byte == 2
    }
    mutating func optionalString(_ v: inout String?) throws { v = try optionalString() }
    mutating func optionalTime(_ v: inout Timestamp?) throws { v = try optionalTime() }
    mutating func trailingOptionalTime(_ v: inout Timestamp?) throws { v = isAtEnd ? nil : try optionalTime() }
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
