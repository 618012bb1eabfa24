import Basics
import Foundation
import LogEngine
import Testing

@testable import Ledger
@testable import Projections

/// User record version 2 (`user_versions` values), and version 1 as older ledgers hold it.
@Suite("user records")
struct UserRecordTests {
    /// Strings as they reach the projection: Apple's forms, and text meant to trip a packer.
    static let texts: [String?] = [
        nil, "", "acct-86950", "001650.081c6193f7d3bc696cac6e4421a7ab60.6950", "tc1d42e55c27f5efe8e90789677202de3",
        "4090dd.ee03b01dd1df8d0416773485b2c8a541", "63ddf9f9bd0d85016c8013d40d103ae4",
        "8aWNCexShdyNYWiLnLGXLKwXbWbk3QDNSG+2Cwf0C7WgDvGXs9UnZstNUwEU8Tdzf1C0vK/NEWuI9iWK0ll+GIE=",
        "0123456789abcde", "0123456789abcdef", "0123456789abcdef0", "x0123456789abcdef0", "0123456789ABCDEF0123",
        "aaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbb.cc", "QUJDREVGR0hJSktMTU5PUA==", "QUJDREVGR0hJSktMTU5PUB==", "QUJDREVGR0hJSktMTU5PUA",
        "QUJDREVG\nR0hJSktMTU5PUA==", "AAAAAAAAAAAAAAAAAAAAAAAA", "été 🚀 \u{0}\u{1b}[31m\"", String(repeating: "é", count: 40_000),
        String(repeating: "ab", count: 70_000), "\u{202e}0123456789abcdef0123456789abcdef",
    ]
    /// Times a fold can store: any a ledger can write, its first and last included.
    static let times: [Timestamp?] = [
        nil, Timestamp(microseconds: 1_763_990_000_123_456), Timestamp(microseconds: 0),
        Timestamp(microseconds: -5), .earliest, .latest,
    ]
    /// The largest key or sequence a ledger gives (2^63 - 1).
    static let largestNumber = UInt64(Int64.max)

    private func randomState<G: RandomNumberGenerator>(_ g: inout G) -> UserState {
        let largest = Self.largestNumber
        var u = UserState(
            key: [1, 2, largest, UInt64.random(in: 0...largest, using: &g)].randomElement(using: &g)!,
            status: UserStatus.allCases.randomElement(using: &g)!,
            sequence: [0, 7, largest, UInt64.random(in: 0...largest, using: &g)].randomElement(using: &g)!)
        u.firstSequence = [u.lastSequence, 0, u.lastSequence / 2, u.lastSequence - min(3, u.lastSequence)].randomElement(using: &g)!
        func text() -> String? { Self.texts.randomElement(using: &g)! }
        func time() -> Timestamp? { Self.times.randomElement(using: &g)! }
        (u.accountID, u.senderSub, u.transferSub, u.recipientSub, u.targetTeam, u.lastError) = (text(), text(), text(), text(), text(), text())
        u.migratedVia = [nil, .transferIDGeneration, .exchange, .signIn].randomElement(using: &g)!
        u.lastErrorClass = [nil, .timeout, .rateLimited, .invalidGrant].randomElement(using: &g)!
        if Bool.random(using: &g), let keyID = text(), let combined = text() { u.email = SealedValue(keyID: keyID, combined: combined) }
        (u.isPrivateEmail, u.emailForwarding) = ([nil, false, true].randomElement(using: &g)!, [nil, false, true].randomElement(using: &g)!)
        (u.migratedAt, u.consentRevokedAt, u.accountDeletedAt, u.erasedAt, u.lastAttemptAt, u.migratedRecordedAt) = (
            time(), time(), time(), time(), time(), time()
        )
        u.attempts = [0, 1, 300, UserStateCodec.maximumCount].randomElement(using: &g)!
        u.notifications = [0, 2, UserStateCodec.maximumCount].randomElement(using: &g)!
        return u
    }

    /// A random state as the fold stores it: the entry's key and its version-2 value.
    private func randomEntry<G: RandomNumberGenerator>(_ g: inout G) -> (user: UserState, key: [UInt8], value: [UInt8]) {
        let u = randomState(&g)
        return (u, ProjectionDatabases.versionKey(u.key, u.lastSequence), UserStateCodec.encode(u, sequence: u.lastSequence))
    }

    private func decode(_ value: [UInt8], key: [UInt8]) throws -> UserState {
        try value.withUnsafeBytes { v in try key.withUnsafeBytes { k in try UserStateCodec.decode(key: k, value: v) } }
    }

    @Test("version 2 gives back every state it is given, whatever its strings, times and numbers")
    func roundTrip() throws {
        var g = SystemRandomNumberGenerator()
        for _ in 0..<1_500 {
            let (u, key, value) = randomEntry(&g)
            #expect(value.first == 2)
            #expect(try decode(value, key: key) == u)
        }
    }

    /// Numbers an altered copy can hold but no fold writes, each alone on an ordinary state.
    static let impossible: [(String, @Sendable (inout UserState) -> Void)] = [
        ("a key beyond 2^63", { $0.key = Self.largestNumber + 1 }),
        (
            "a last event beyond 2^63",
            {
                $0.lastSequence = .max
                $0.firstSequence = 1
            }
        ),
        ("a first event after the last", { $0.firstSequence = $0.lastSequence + 1 }),
        ("a time before year 0000", { $0.migratedAt = Timestamp(microseconds: .min) }),
        ("a time after year 9999", { $0.lastAttemptAt = Timestamp(microseconds: .max) }),
        ("attempts beyond 2^32 - 1", { $0.attempts = UserStateCodec.maximumCount + 1 }),
        ("notifications beyond 2^32 - 1", { $0.notifications = 1 << 40 }),
    ]

    @Test("a stored state whose numbers no fold gives is refused as a malformed record", arguments: impossible.indices)
    func impossibleNumbersRefused(_ index: Int) throws {
        var u = UserState(key: 42, status: .migrated, sequence: 1_000)
        u.firstSequence = 900
        Self.impossible[index].1(&u)
        let key = ProjectionDatabases.versionKey(u.key, u.lastSequence)
        let error = #expect(throws: LedgerError.self, "\(Self.impossible[index].0)") {
            try self.decode(UserStateCodec.encode(u, sequence: u.lastSequence), key: key)
        }
        #expect(error?.code == .malformedRecord)
    }

    @Test("a migrated user with Apple's identifiers and a sealed email is written byte for byte as schemas/ledger-format.md says")
    func documentedLayout() throws {
        var u = UserState(key: 86_950, status: .migrated, sequence: 100_001)
        u.firstSequence = 99_999
        u.accountID = "acct-86950"
        u.transferSub = "tc1d42e55c27f5efe8e90789677202de3"
        u.recipientSub = "001650.081c6193f7d3bc696cac6e4421a7ab60.6950"
        u.migratedVia = .exchange
        u.attempts = 1
        u.isPrivateEmail = true
        u.email = SealedValue(keyID: "63ddf9f9bd0d85016c8013d40d103ae4", combined: "QUJDREVGR0hJSktMTU5PUA==")
        let t = Timestamp(microseconds: 1_000)
        (u.migratedAt, u.lastAttemptAt, u.migratedRecordedAt) = (t, t, Timestamp(microseconds: 1_064))
        let value = UserStateCodec.encode(u, sequence: 100_001)
        let expected: [UInt8] =
            [2, 0, 2, 4, 2, 1, 0, 2 * 3 + 0]  // version, sequence xor, span, status, via, attempts, notifications, flags
            + [1, 10] + Array("acct-86950".utf8)
            + [0]
            + [2, 1, UInt8(ascii: "t"), 16] + Hex.decode("c1d42e55c27f5efe8e90789677202de3")! + [0]
            + [2, 7] + Array("001650.".utf8) + [16] + Hex.decode("081c6193f7d3bc696cac6e4421a7ab60")! + [5] + Array(".6950".utf8)
            + [0, 0, 0]  // target team, error class, last error
            + [2, 0, 16] + Hex.decode("63ddf9f9bd0d85016c8013d40d103ae4")! + [0]
            + [3, 16] + Array("ABCDEFGHIJKLMNOP".utf8)
            + [0b110001, 0xd0, 0x0f, 0, 0x80, 0x01]  // present: migrated_at, last_attempt_at, migrated_recorded_at; 1000, +0, +64 (zigzag)
        #expect(value == expected)
        #expect(try decode(value, key: ProjectionDatabases.versionKey(86_950, 100_001)) == u)
    }

    @Test(
        "a version 1 record (as a ledger of projection layout 2 may hold it) is refused as of an unknown version, never read as version 2: layout 3 loads its projections again from the log"
    )
    func versionOneRefused() throws {
        // From Tests/Fixtures/userrecord1's first days: a user whose exchange was refused, 429.
        var v1: [UInt8] =
            [1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 2] + [0, 0, 0, 0, 0, 0, 0, 2] + [2, 0] + [0, 0, 0, 1] + [0, 0, 0, 0] + [0, 0]
        v1 += [1, 0, 6] + Array("acct-7".utf8) + [0] + [1, 0, 33] + Array("t9b46b32120cd9f3c1019f296b5f99b74".utf8) + [0, 0]
        v1 += [1, 0, 12] + Array("rate_limited".utf8) + [1, 0, 37] + Array("HTTP 429 from /auth/usermigrationinfo".utf8) + [0, 0]
        v1 += [0, 0, 0, 0] + [1] + BigEndian.bytes(UInt64(1_763_990_000_123_456))
        var error: LedgerError?
        do { _ = try decode(v1, key: ProjectionDatabases.versionKey(1, 2)) } catch let e as LedgerError { error = e }
        #expect(error?.code == .malformedRecord && error?.message.contains("unknown record version") == true, "\(String(describing: error))")
    }

    @Test("a cut, extended or unknown record is refused as malformed, never read wrong or crashed on")
    func malformed() throws {
        var g = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let (_, key, value) = randomEntry(&g)
            for cut in Set([0, 1, 2, value.count / 2, value.count - 1]) where cut < value.count {
                #expect(throws: LedgerError.self) { try decode(Array(value.prefix(cut)), key: key) }
            }
            #expect(throws: LedgerError.self) { try decode(value + [0], key: key) }
        }
        let key = ProjectionDatabases.versionKey(1, 1)
        #expect(throws: LedgerError.self) { try decode([3, 0, 0, 1, 0, 0, 0, 0], key: key) }
        #expect(throws: LedgerError.self) { try decode([2, 0, 0, 1, 0, 0, 0, 0, 4], key: key) }  // text form 4
        #expect(throws: LedgerError.self) { try decode([2] + Array(repeating: 0xff, count: 10) + [1], key: key) }  // a varint past 64 bits
        #expect(throws: LedgerError.self) { try decode([2, 0, 0, 9], key: key) }  // status 9
    }
}
