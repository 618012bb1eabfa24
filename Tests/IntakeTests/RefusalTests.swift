import AppleID
import Basics
import Crypto
import CryptoExtras
import Foundation
import Intake
import Ledger
import TestSupport
import Testing

/// One way a delivery can be wrong, and the reason it must be refused with.
struct RefusalCase: CustomTestStringConvertible, Sendable {
    enum Kind: Sendable { case notification, signIn }
    let name: String
    let kind: Kind
    let reason: TokenRejection.Reason
    /// The bytes delivered: a notification body, or an identity token.
    let make: @Sendable (IntakeFixture) throws -> Data
    var nonce: String? = nil

    var testDescription: String { name }

    static func notification(
        _ name: String, _ reason: TokenRejection.Reason, claims: @escaping @Sendable (IntakeFixture) throws -> [String: Any]
    ) -> RefusalCase {
        RefusalCase(name: name, kind: .notification, reason: reason) { f in IntakeFixture.body(try IntakeFixture.signed(claims(f))) }
    }

    static func signIn(
        _ name: String, _ reason: TokenRejection.Reason, nonce: String? = nil, claims: @escaping @Sendable (IntakeFixture) throws -> [String: Any]
    ) -> RefusalCase {
        RefusalCase(name: name, kind: .signIn, reason: reason, make: { f in Data(try IntakeFixture.signed(claims(f)).utf8) }, nonce: nonce)
    }

    static func payload(
        _ name: String, _ reason: TokenRejection.Reason, _ payload: @escaping @Sendable (IntakeFixture) throws -> String
    ) -> RefusalCase {
        RefusalCase(name: name, kind: .notification, reason: reason) { f in IntakeFixture.body(try payload(f)) }
    }

    static let all: [RefusalCase] = [
        .payload("alg none", .algorithmNone) { f in
            try IntakeFixture.token(header: ["alg": "none"], claims: try f.notificationClaims(type: "consent-revoked"), key: nil)
        },
        .payload("HS256 keyed with Apple's RSA public key", .algorithmNotAllowed) { f in
            let claims = try f.notificationClaims(type: "consent-revoked")
            let input = try IntakeFixture.signingInput(header: ["alg": "HS256", "kid": TestKeys.minter.keyID], claims: claims)
            let secret = SymmetricKey(data: Data(TestKeys.apple.publicKey.pemRepresentation.utf8))
            let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: secret)
            return try IntakeFixture.token(header: ["alg": "HS256", "kid": TestKeys.minter.keyID], claims: claims, signature: Data(mac))
        },
        .payload("kid not in Apple's key set", .unknownKeyID) { f in
            try IntakeFixture.token(
                header: ["alg": "RS256", "kid": "NOT-APPLES"], claims: try f.notificationClaims(type: "consent-revoked"), key: TestKeys.stranger)
        },
        .payload("no kid", .missingKeyID) { f in
            try IntakeFixture.token(header: ["alg": "RS256"], claims: try f.notificationClaims(type: "consent-revoked"))
        },
        .payload("Apple's kid, another key's signature", .badSignature) { f in
            try IntakeFixture.token(
                header: ["alg": "RS256", "kid": TestKeys.minter.keyID], claims: try f.notificationClaims(type: "consent-revoked"),
                key: TestKeys.stranger)
        },
        .payload("payload changed after signing", .badSignature) { f in
            let good = try IntakeFixture.signed(try f.notificationClaims(type: "consent-revoked", sub: "001.b.0001"))
            let forged = try IntakeFixture.signed(try f.notificationClaims(type: "account-deleted", sub: "001.b.0001"))
            let g = good.split(separator: ".")
            let x = forged.split(separator: ".")
            return [g[0], x[1], g[2]].joined(separator: ".")
        },
        .signIn("identity token expired beyond the leeway", .expired) { f in
            var c = f.identityClaims()
            c["iat"] = f.now - 720
            c["exp"] = f.now - 120
            return c
        },
        .notification("issued in the future", .issuedInFuture) { f in
            var c = try f.notificationClaims(type: "consent-revoked")
            c["iat"] = f.now + 600
            return c
        },
        .notification("wrong issuer", .wrongIssuer) { f in
            var c = try f.notificationClaims(type: "consent-revoked")
            c["iss"] = "https://appleid.example.com"
            return c
        },
        .signIn("wrong audience", .wrongAudience) { f in
            var c = f.identityClaims()
            c["aud"] = "com.someone.else"
            return c
        },
        .payload("not base64url", .malformedBase64) { _ in "eyJhbGciOiJSUzI1NiJ9.not$base64!.c2ln" },
        .payload("header not JSON", .malformedJSON) { _ in Base64URL.encode(Data("not json".utf8)) + ".e30.c2ln" },
        .payload("two parts", .malformedJWS) { _ in "eyJhbGciOiJSUzI1NiJ9.e30" },
        .notification("no jti", .missingClaim) { f in
            var c = try f.notificationClaims(type: "consent-revoked")
            c["jti"] = nil
            return c
        },
        .signIn("no sub", .missingClaim) { f in
            var c = f.identityClaims()
            c["sub"] = nil
            return c
        },
        .notification("unknown event type", .unknownEventType) { f in try f.notificationClaims(type: "email-changed") },
        RefusalCase(name: "body over 64 KiB", kind: .notification, reason: .bodyTooLarge) { f in
            let payload = try IntakeFixture.signed(try f.notificationClaims(type: "consent-revoked"))
            return try JSONSerialization.data(withJSONObject: ["payload": payload, "padding": String(repeating: "x", count: 70_000)])
        },
        RefusalCase(name: "body not Apple's shape", kind: .notification, reason: .malformedBody) { _ in Data(#"{"jwt": "abc"}"#.utf8) },
        .signIn("nonce differs from the caller's", .nonceMismatch, nonce: "nonce-from-backend") { f in
            var c = f.identityClaims()
            c["nonce"] = "another-nonce"
            c["nonce_supported"] = true
            return c
        },
        .signIn("nonce missing where supported", .nonceMismatch, nonce: "nonce-from-backend") { f in
            var c = f.identityClaims()
            c["nonce_supported"] = true
            return c
        },
        .signIn("sub holding NUL, which the ledger cannot hold in an identifier", .invalidClaim) { f in f.identityClaims(sub: "001.a\u{0}b.0001") },
        .signIn("sub of 401 bytes, longer than the ledger's identifiers", .invalidClaim) { f in
            f.identityClaims(sub: String(repeating: "s", count: 401))
        },
        .notification("notification whose sub holds NUL", .invalidClaim) { f in try f.notificationClaims(type: "consent-revoked", sub: "001\u{0}") },
        .notification("jti of 401 bytes", .invalidClaim) { f in
            try f.notificationClaims(type: "consent-revoked", jti: String(repeating: "j", count: 401))
        },
        .payload("payload not UTF-8", .malformedJSON) { _ in
            Base64URL.encode(Data(#"{"alg":"RS256","kid":"x"}"#.utf8)) + "."
                + Base64URL.encode(Data([0x7B, 0x22, 0x73, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D])) + ".c2ln"
        },
        .signIn("real_user_status out of range", .invalidClaim) { f in
            var c = f.identityClaims()
            c["real_user_status"] = 7
            return c
        },
        // Where jwt-kit alone would answer otherwise: Handover's own check comes first.
        .payload("the signature spelled another way (bits left over that decode to the same bytes)", .malformedBase64) { f in
            let token = try IntakeFixture.signed(try f.notificationClaims(type: "consent-revoked"))
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            let last = alphabet.firstIndex(of: token.last!)!
            return String(token.dropLast()) + String(alphabet[last ^ 1])
        },
        .payload("a payload that is not JSON, under a signature that does not verify", .malformedJSON) { _ in
            Base64URL.encode(Data(#"{"alg":"RS256","kid":"x"}"#.utf8)) + "." + Base64URL.encode(Data("not json".utf8)) + ".c2ln"
        },
        .payload("a member named twice in the payload", .malformedJSON) { f in
            let claims = try f.notificationClaims(type: "consent-revoked")
            let input = try IntakeFixture.signingInput(header: ["alg": "RS256", "kid": TestKeys.minter.keyID], claims: claims)
            let parts = input.split(separator: ".")
            var payload = String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self)
            payload.removeLast()
            payload += #","iss":"https://appleid.apple.com"}"#
            return try IntakeFixture.token(header: ["alg": "RS256", "kid": TestKeys.minter.keyID], rawClaims: Array(payload.utf8))
        },
        .signIn("email_verified neither true nor false", .invalidClaim) { f in
            var c = f.identityClaims()
            c["email_verified"] = "perhaps"
            return c
        },
        .notification("events a string that is not JSON", .malformedJSON) { f in
            var c = try f.notificationClaims(type: "consent-revoked")
            c["events"] = "{type: consent-revoked}"
            return c
        },
        .notification("events neither an object nor a string", .invalidClaim) { f in
            var c = try f.notificationClaims(type: "consent-revoked")
            c["events"] = [1, 2]
            return c
        },
    ]
}

@Suite("Refusals: every bad token gets its reason and a rejected event, nothing else")
struct RefusalTests {
    @Test(arguments: RefusalCase.all)
    func refused(_ refusal: RefusalCase) async throws {
        let f = try await IntakeFixture()
        let delivered = try refusal.make(f)
        let before = try f.head
        let receipt = try await deliver(delivered, refusal, to: f)
        #expect(receipt.rejection?.reason == refusal.reason, "\(receipt.rejection?.description ?? "accepted")")

        let rejectedType: EventType = refusal.kind == .notification ? .notificationRejected : .signInRejected
        #expect(try f.head == before + 1)
        let events = try f.events(rejectedType)
        #expect(events.count == 1)
        switch events.first?.body {
        case .notificationRejected(let body)?, .signInRejected(let body)?:
            #expect(body.reason == refusal.reason.rawValue)
            #expect(!body.detail.isEmpty)
            #expect(body.payloadSHA256 == Hex.encode(SHA256.hash(data: delivered)))
        default:
            Issue.record("no rejected event")
        }
        #expect(try f.users().isEmpty)
        #expect(try f.events(.notificationReceived).isEmpty && f.events(.signInVerified).isEmpty)

        // The same bad delivery again is acknowledged, not recorded twice.
        let again = try await deliver(delivered, refusal, to: f)
        #expect(again.rejection?.reason == refusal.reason)
        #expect(try f.head == before + 1)
    }

    private func deliver(_ data: Data, _ refusal: RefusalCase, to f: IntakeFixture) async throws -> IntakeReceipt {
        switch refusal.kind {
        case .notification: return try await f.intake.receiveNotification(data)
        case .signIn: return try await f.intake.receiveSignIn(String(decoding: data, as: UTF8.self), nonce: refusal.nonce)
        }
    }

    @Test("every reason a token or notification can be refused for is reached by a case above")
    func everyReasonReached() {
        #expect(Set(RefusalCase.all.map(\.reason.rawValue)) == Set(TokenRejection.Reason.all.map(\.rawValue)))
    }

    @Test("A rejected event keeps the payload's hash, never the payload")
    func noPayloadKept() async throws {
        let f = try await IntakeFixture()
        var claims = f.identityClaims(sub: "001.secret-sub.0001")
        claims["aud"] = "com.someone.else"
        _ = try await f.intake.receiveSignIn(try IntakeFixture.signed(claims))
        f.ledger.close()
        #expect(try !filesContain(f.dir.path, "001.secret-sub.0001"))
        #expect(try !filesContain(f.dir.path, "person@privaterelay.appleid.com"))
    }
}
