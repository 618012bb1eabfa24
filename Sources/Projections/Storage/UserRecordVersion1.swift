import Ledger

/// User record version 1, the `user_versions` value of ledgers written before version 2 (and
/// layout 1's `users` value): read only. A `projections rebuild` (or any load of a fresh
/// generation) writes version 2 in its place.
///
/// A version byte, the user key, first and last sequence as u64, fixed fields, then optional
/// strings (presence byte, u16 length, UTF-8) and optional times (presence byte, i64 µs), all
/// big-endian; `schemas/ledger-format.md` ("Projection values") has it byte by byte.
enum UserRecordVersion1 {
    static let version: UInt8 = 1

    static func decode(_ raw: UnsafeRawBufferPointer) throws -> UserState {
        var r = BinaryReader(raw)
        guard try r.u8() == version else { throw LedgerError(.malformedRecord, "users: not a version 1 record") }
        var u = UserState(key: try r.u64(), status: .pending, sequence: 0)
        u.firstSequence = try r.u64()
        u.lastSequence = try r.u64()
        u.status = try UserStateCodec.decodedStatus(try r.u8())
        u.migratedVia = MigrationPath(rawValue: try r.u8())
        u.attempts = Int(try r.u32())
        u.notifications = Int(try r.u32())
        u.isPrivateEmail = UserStateCodec.tristate(try r.u8())
        u.emailForwarding = UserStateCodec.tristate(try r.u8())
        u.accountID = try string(&r)
        u.senderSub = try string(&r)
        u.transferSub = try string(&r)
        u.recipientSub = try string(&r)
        u.targetTeam = try string(&r)
        u.lastErrorClass = try UserStateCodec.decodedErrorClass(try string(&r))
        u.lastError = try string(&r)
        let keyID = try string(&r)
        let combined = try string(&r)
        u.email = UserStateCodec.decodedEmail(keyID: keyID, combined: combined)
        u.migratedAt = try time(&r)
        u.consentRevokedAt = try time(&r)
        u.accountDeletedAt = try time(&r)
        u.erasedAt = try time(&r)
        u.lastAttemptAt = try time(&r)
        // Records written before the field existed end here.
        u.migratedRecordedAt = r.isAtEnd ? nil : try time(&r)
        return u
    }

    private static func string(_ r: inout BinaryReader) throws -> String? {
        guard try r.u8() == 1 else { return nil }
        let length = try r.take(2)
        return String(decoding: try r.take(Int(length[0]) << 8 | Int(length[1])), as: UTF8.self)
    }

    private static func time(_ r: inout BinaryReader) throws -> Timestamp? {
        guard try r.u8() == 1 else { return nil }
        return try r.time("users")
    }
}
