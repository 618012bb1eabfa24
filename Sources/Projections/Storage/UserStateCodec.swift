import Basics
import Ledger
import LogEngine

/// The binary layout of a ``UserState`` in `user_versions`: user record version 2, the only one
/// projection layout 3 holds (a ledger whose projections hold version 1, of layout 1 or 2, has
/// them loaded again when it is upgraded).
///
/// `schemas/ledger-format.md` ("Projection values") documents it byte by byte. It takes the
/// user key and the sequence from the entry's key instead of repeating them, writes numbers as
/// varints and times as differences, and packs hex and base64 text (``PackedText``).
enum UserStateCodec {
    static let version: UInt8 = 2

    /// The value stored under `versionKey(u.key, sequence)`.
    static func encode(_ u: UserState, sequence: UInt64) -> [UInt8] {
        var writer = BinaryWriter()
        writer.bytes.append(version)
        var u = u
        do { try fields(&writer, &u, sequence: sequence) } catch { preconditionFailure("writing a user state cannot fail: \(error)") }
        return writer.bytes
    }

    /// The user a `user_versions` entry holds.
    static func decode(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> UserState {
        guard key.count == 16, let recordVersion = value.first else { throw LedgerError(.malformedRecord, "users: malformed version entry") }
        guard recordVersion == version else { throw LedgerError(.malformedRecord, "users: unknown record version") }
        var reader = BinaryReader(value)
        reader.offset = 1
        var u = UserState(key: try BigEndian.uint64(key), status: .pending, sequence: 0)
        try fields(&reader, &u, sequence: BigEndian.uint64(key, at: 8))
        guard reader.isAtEnd else { throw LedgerError(.malformedRecord, "users: bytes after the record") }
        return try checked(u)
    }

    /// The most attempts or notifications one user's record may count: each is an event of
    /// the log, and no log holds four billion about one user.
    static let maximumCount = Int(UInt32.max)

    /// `u` as decoded, refused when its numbers are none a fold gives: a key or sequence
    /// beyond what a ledger numbers (2^63), a first event after its last, a count beyond
    /// ``maximumCount`` (so that adding to it, or summing users' counts, cannot overflow).
    private static func checked(_ u: UserState) throws -> UserState {
        guard u.key <= UInt64(Int64.max), u.lastSequence <= UInt64(Int64.max), u.firstSequence <= u.lastSequence else {
            throw LedgerError(.malformedRecord, "users: user \(u.key) has events \(u.firstSequence) to \(u.lastSequence), numbers no ledger gives")
        }
        guard (0...maximumCount).contains(u.attempts), (0...maximumCount).contains(u.notifications) else {
            throw LedgerError(
                .malformedRecord, "users: user \(u.key) counts \(u.attempts) attempts and \(u.notifications) notifications, beyond \(maximumCount)")
        }
        return u
    }

    /// The fields after the version byte, in stored order: the one statement of the layout,
    /// which ``encode(_:sequence:)`` runs with a writer (each call writes the value) and
    /// ``decode(key:value:)`` with a reader (each call reads it into `u`). Generic, so that
    /// both are straight-line code: a million users are decoded per listing.
    private static func fields<Coder: FieldCoder>(_ c: inout Coder, _ u: inout UserState, sequence: UInt64) throws {
        // A field stored in another form than the state's is converted back only when reading.
        var lastSequence = u.lastSequence ^ sequence
        try c.varint(&lastSequence)
        if Coder.isReading { u.lastSequence = lastSequence ^ sequence }
        var span = u.lastSequence &- u.firstSequence
        try c.varint(&span)
        if Coder.isReading { u.firstSequence = u.lastSequence &- span }
        var status = u.status.rawValue
        try c.u8(&status)
        if Coder.isReading { u.status = try decodedStatus(status) }
        var via = u.migratedVia?.rawValue ?? 0
        try c.u8(&via)
        if Coder.isReading { u.migratedVia = MigrationPath(rawValue: via) }
        var attempts = UInt64(clamping: u.attempts)
        var notifications = UInt64(clamping: u.notifications)
        try c.varint(&attempts)
        try c.varint(&notifications)
        if Coder.isReading { (u.attempts, u.notifications) = (Int(clamping: attempts), Int(clamping: notifications)) }
        // Two three-way flags in one byte: is_private_email × 3 + email forwarding.
        var flags = tristate(u.isPrivateEmail) * 3 + tristate(u.emailForwarding)
        try c.u8(&flags)
        if Coder.isReading {
            guard flags < 9 else { throw LedgerError(.malformedRecord, "users: bad email flags") }
            (u.isPrivateEmail, u.emailForwarding) = (tristate(flags / 3), tristate(flags % 3))
        }
        try c.text(&u.accountID)
        try c.text(&u.senderSub)
        try c.text(&u.transferSub)
        try c.text(&u.recipientSub)
        try c.text(&u.targetTeam)
        var errorClass = u.lastErrorClass?.rawValue
        try c.text(&errorClass)
        if Coder.isReading { u.lastErrorClass = try decodedErrorClass(errorClass) }
        try c.text(&u.lastError)
        var keyID = u.email?.keyID
        var combined = u.email?.combined
        try c.text(&keyID)
        try c.text(&combined)
        if Coder.isReading { u.email = decodedEmail(keyID: keyID, combined: combined) }
        // Which times are present (bit 0 the first below), then each as its difference from
        // the one before it: the times of one event are often equal.
        var present: UInt8 = 0
        if !Coder.isReading {
            for (bit, time) in [u.migratedAt, u.consentRevokedAt, u.accountDeletedAt, u.erasedAt, u.lastAttemptAt, u.migratedRecordedAt].enumerated()
            where time != nil {
                present |= 1 << bit
            }
            if u.package != nil { present |= 64 }
            if u.applied.recipientSub != nil { present |= 128 }
        }
        try c.u8(&present)
        var previous: Int64 = 0
        try c.time(&u.migratedAt, present: present & 1 != 0, after: &previous)
        try c.time(&u.consentRevokedAt, present: present & 2 != 0, after: &previous)
        try c.time(&u.accountDeletedAt, present: present & 4 != 0, after: &previous)
        try c.time(&u.erasedAt, present: present & 8 != 0, after: &previous)
        try c.time(&u.lastAttemptAt, present: present & 16 != 0, after: &previous)
        try c.time(&u.migratedRecordedAt, present: present & 32 != 0, after: &previous)
        // Bit 6: the handoff package's number follows (records written before it have none).
        var package = UInt64(clamping: u.package ?? 0)
        if present & 64 != 0 {
            try c.varint(&package)
            if Coder.isReading {
                guard HandoffManifest.packagesAllowed.contains(Int(clamping: package)) else {
                    throw LedgerError(.malformedRecord, "users: bad package number")
                }
                u.package = Int(package)
            }
        }
        // Bit 7: apply's outcome in the recipient_sub column (``ApplyOutcome/storedByte``) and the
        // time it was recorded follow.
        if present & 128 != 0 { try applied(&c, &u.applied.recipientSub, after: &previous) }
        // A second presence byte follows when any of its fields is present (records written
        // before them end above): bit 0 email_changed_at, 1 email_forwarding_changed_at, 2 the
        // email column's apply outcome and time, 3 the email_forwarding column's.
        var more: UInt8 = 0
        if !Coder.isReading {
            for (bit, present) in [
                u.emailChangedAt != nil, u.emailForwardingChangedAt != nil, u.applied.email != nil, u.applied.emailForwarding != nil,
            ]
            .enumerated() where present {
                more |= 1 << bit
            }
        }
        guard Coder.isReading ? c.hasMore : more != 0 else { return }
        try c.u8(&more)
        guard more != 0, more < 16 else { throw LedgerError(.malformedRecord, "users: bad second presence byte") }
        try c.time(&u.emailChangedAt, present: more & 1 != 0, after: &previous)
        try c.time(&u.emailForwardingChangedAt, present: more & 2 != 0, after: &previous)
        if more & 4 != 0 { try applied(&c, &u.applied.email, after: &previous) }
        if more & 8 != 0 { try applied(&c, &u.applied.emailForwarding, after: &previous) }
    }

    /// One column's apply outcome (``ApplyOutcome/storedByte``), then the time it was recorded.
    private static func applied<Coder: FieldCoder>(_ c: inout Coder, _ cell: inout AppliedCell?, after previous: inout Int64) throws {
        var outcome = cell?.outcome.storedByte ?? 0
        var at = cell?.at
        try c.u8(&outcome)
        try c.time(&at, present: true, after: &previous)
        if Coder.isReading {
            guard let known = ApplyOutcome(storedByte: outcome), let at else { throw LedgerError(.malformedRecord, "users: bad apply outcome") }
            cell = AppliedCell(known, at: at)
        }
    }

    /// An optional Boolean as 0 (absent), 1 (false) or 2 (true).
    private static func tristate(_ v: Bool?) -> UInt8 { v.map { $0 ? 2 : 1 } ?? 0 }
    private static func tristate(_ byte: UInt8) -> Bool? { byte == 0 ? nil : byte == 2 }

    private static func decodedStatus(_ byte: UInt8) throws -> UserStatus {
        guard let status = UserStatus(rawValue: byte) else { throw LedgerError(.malformedRecord, "users: bad status") }
        return status
    }

    private static func decodedErrorClass(_ name: String?) throws -> FailureClass? {
        try name.map { name in
            guard let kind = FailureClass(rawValue: name) else { throw LedgerError(.malformedRecord, "users: unknown failure class") }
            return kind
        }
    }

    /// The sealed email: key ID and sealed bytes, both or neither.
    private static func decodedEmail(keyID: String?, combined: String?) -> SealedValue? {
        keyID.flatMap { keyID in combined.map { SealedValue(keyID: keyID, combined: $0) } }
    }
}

/// What ``UserStateCodec``'s layout is run with: a writer, which writes each value, or a
/// reader, which reads each value into its place.
protocol FieldCoder {
    /// Whether the coder reads values into the state (else it writes them from it).
    static var isReading: Bool { get }
    /// Reading: whether bytes remain after those read so far.
    var hasMore: Bool { get }
    mutating func u8(_ v: inout UInt8) throws
    mutating func varint(_ v: inout UInt64) throws
    /// An optional string in ``PackedText``'s forms.
    mutating func text(_ v: inout String?) throws
    /// An optional time, written only when `present`, as a zigzag varint of its microseconds
    /// minus `previous`, which it then becomes.
    mutating func time(_ v: inout Timestamp?, present: Bool, after previous: inout Int64) throws
}

extension BinaryWriter: FieldCoder {
    static var isReading: Bool { false }
    var hasMore: Bool { false }
    mutating func u8(_ v: inout UInt8) { bytes.append(v) }
    mutating func varint(_ v: inout UInt64) { varint(v) }
    mutating func text(_ v: inout String?) { PackedText.write(v, to: &self) }
    mutating func time(_ v: inout Timestamp?, present: Bool, after previous: inout Int64) {
        guard present, let t = v?.microseconds else { return }
        let delta = t &- previous
        varint(UInt64(bitPattern: delta << 1 ^ delta >> 63))
        previous = t
    }
}

extension BinaryReader: FieldCoder {
    static var isReading: Bool { true }
    var hasMore: Bool { !isAtEnd }
    mutating func u8(_ v: inout UInt8) throws { v = try u8() }
    mutating func varint(_ v: inout UInt64) throws { v = try varint() }
    mutating func text(_ v: inout String?) throws { v = try PackedText.read(from: &self) }
    mutating func time(_ v: inout Timestamp?, present: Bool, after previous: inout Int64) throws {
        guard present else {
            v = nil
            return
        }
        let zigzag = try varint()
        let t = previous &+ (Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
        v = try BinaryReader.checked(t, "users")
        previous = t
    }
}
