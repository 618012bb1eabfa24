import AppleID
import AppleSimulator
import Basics
import Crypto
import CryptoExtras
import Foundation
import Intake
import Ledger
import LogEngine
import Logging
import Projections
import TestSupport

/// Keys made once per test process: RSA key generation takes a moment.
enum TestKeys {
    /// The key Apple's key set publishes (through a ``TokenMinter``).
    static let apple = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    /// A key nobody trusts.
    static let stranger = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let minter = try! TokenMinter(key: apple)
}

/// A ledger for `com.example.app` in a temporary directory (a recipient's unless asked), with an intake that
/// trusts ``TestKeys/apple``, and builders for tokens good and bad.
final class IntakeFixture {
    static let clientID = "com.example.app"
    let dir = TemporaryDirectory()
    let ledger: Ledger
    let projection = UserProjection()
    let intake: AppleIntake

    init(policy: LedgerCreated.DeletionPolicy = .erase, keys: AppleKeySet? = nil, role: LedgerCreated.Role = .recipient) async throws {
        let created = LedgerCreated(
            teamID: role == .recipient ? "BBBB222222" : "AAAA111111", clientIDs: [IntakeFixture.clientID, "com.example.web"], role: role,
            ledgerID: UUID().uuidString, onAccountDeleted: policy)
        ledger = try await Ledger.create(at: dir.sub("ledger"), created, folders: [projection])
        let jwks = try await JSONWebKeySet(json: Data(TestKeys.minter.jwks().utf8))
        intake = try AppleIntake(ledger: ledger, projection: projection, keys: keys ?? AppleKeySet(.fixed(jwks)), logger: IntakeFixture.quiet)
    }

    deinit { ledger.close() }

    /// A second recipient ledger made by `handover init` in `directory`, for tests that run
    /// `handover` as users do, and a JWKS file with Apple's key; both paths.
    static func commandLineLedger(in directory: TemporaryDirectory, name: String = "cli-ledger") throws -> (ledger: String, jwks: String) {
        let ledger = directory.sub(name)
        let jwks = directory.sub("jwks.json")
        let created = try runProduct(
            "handover", ["init", "--ledger", ledger, "--team-id", "BBBB222222", "--client-id", IntakeFixture.clientID, "--role", "recipient"])
        guard created.status == 0 else { throw LedgerError(.notALedger, "handover init failed: \(created.err)") }
        try Data(TestKeys.minter.jwks().utf8).write(to: URL(fileURLWithPath: jwks))
        return (ledger, jwks)
    }

    /// A logger for tests that prints nothing below critical.
    static var quiet: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }

    var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// `header.payload` of any two JSON objects, as a stranger would build them (any member
    /// types, keys sorted): what the tests sign.
    static func signingInput(header: [String: Any], claims: [String: Any]) throws -> String {
        let h = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes])
        let c = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes])
        return Base64URL.encode(h) + "." + Base64URL.encode(c)
    }

    /// Claims built as a stranger would, as the simulator's minter takes them.
    static func jsonValues(_ claims: [String: Any]) throws -> [String: JSONValue] {
        try JSONValue.parse(Array(JSONSerialization.data(withJSONObject: claims))).objectValue ?? [:]
    }

    /// A JWS with any header, signed RS256 by `key` (or with `signature` as given).
    static func token(
        header: [String: Any], claims: [String: Any], key: _RSA.Signing.PrivateKey? = TestKeys.apple, signature: Data? = nil
    ) throws -> String {
        let input = try IntakeFixture.signingInput(header: header, claims: claims)
        if let signature { return input + "." + Base64URL.encode(signature) }
        guard let key else { return input + "." }
        return input + "."
            + Base64URL.encode(try key.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5).rawRepresentation)
    }

    /// A JWS with any header over `rawClaims` as given (any bytes), signed RS256 by Apple's key.
    static func token(header: [String: Any], rawClaims: [UInt8]) throws -> String {
        let h = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        let input = Base64URL.encode(h) + "." + Base64URL.encode(rawClaims)
        return input + "."
            + Base64URL.encode(try TestKeys.apple.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5).rawRepresentation)
    }

    /// RS256 with Apple's key and kid.
    static func signed(_ claims: [String: Any]) throws -> String {
        try token(header: ["alg": "RS256", "kid": TestKeys.minter.keyID], claims: claims)
    }

    /// Identity-token claims for `sub`, valid now.
    func identityClaims(sub: String = "001.b.0001", transferSub: String? = nil) -> [String: Any] {
        var claims: [String: Any] = [
            "iss": AppleTokenVerifier.issuer, "aud": IntakeFixture.clientID, "sub": sub, "iat": now, "exp": now + 600,
            "email": "person@privaterelay.appleid.com", "email_verified": "true", "is_private_email": true, "real_user_status": 2,
        ]
        if let transferSub { claims["transfer_sub"] = transferSub }
        return claims
    }

    /// Notification claims with `events` as a JSON string (as delivered) or an object.
    func notificationClaims(
        type: String, sub: String = "001.b.0001", jti: String = UUID().uuidString, email: String? = nil,
        eventsAsString: Bool = true, eventTime: Int64? = nil
    ) throws -> [String: Any] {
        var event: [String: Any] = ["type": type, "sub": sub, "event_time": eventTime ?? now]
        if let email {
            event["email"] = email
            event["is_private_email"] = "true"
        }
        let events: Any =
            eventsAsString ? String(decoding: try JSONSerialization.data(withJSONObject: event, options: [.sortedKeys]), as: UTF8.self) : event
        return ["iss": AppleTokenVerifier.issuer, "aud": IntakeFixture.clientID, "iat": now, "jti": jti, "events": events]
    }

    /// Apple's notification body around a payload.
    static func body(_ payload: String) -> Data {
        try! JSONSerialization.data(withJSONObject: ["payload": payload])
    }

    func events(_ type: EventType) throws -> [RecordedEvent] {
        try ledger.read { view in try view.sequences(of: type).compactMap { try view.event($0) } }
    }

    var head: UInt64 { get throws { try ledger.read { try $0.head().sequence } } }

    func users() throws -> [UserState] { try projection.read(ledger) { snapshot, _ in try snapshot.allUsers() } }

    func user(_ kind: IdentifierKind, _ value: String) throws -> UserState? {
        try projection.read(ledger) { snapshot, _ in try snapshot.user(with: Identifier(kind, value)) }
    }
}
