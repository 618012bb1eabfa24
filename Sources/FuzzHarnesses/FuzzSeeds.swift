import AppleSimulator
import Basics
import Foundation
import Ledger
import LogEngine
import Migration

/// Seed inputs for every harness, made from a small rehearsal's real files (`tools/fuzz
/// --fixtures` runs one and adds a checkpoint and two evidence bundles): what each corpus
/// starts from before the fuzzer finds more.
public enum FuzzSeeds {
    /// The seeds by harness name, each a (file name, input) pair, from the rehearsal in
    /// `demo` (as `handover demo --directory` writes it, plus `sender-checkpoint.txt`,
    /// `bundle-one/` and `bundle-two/`).
    public static func make(fromDemo demo: String) throws -> [String: [(String, [UInt8])]] {
        func file(_ path: String) throws -> [UInt8] {
            try FileBytes.read(demo + "/" + path, limit: 1 << 30)
        }
        func files(_ dir: String) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: demo + "/" + dir).sorted { $0.count == $1.count ? $0 < $1 : $0.count < $1.count }
        }
        func text(_ s: String) -> [UInt8] { Array(s.utf8) }
        let joined = FuzzInput.joined
        var seeds: [String: [(String, [UInt8])]] = [:]

        seeds["users-csv"] = try ["users.csv", "users-late.csv", "handoff.csv", "handoff-0001/rows.csv"].map {
            ($0.replacingOccurrences(of: "/", with: "-"), try file($0))
        }
        seeds["handoff-package"] = try ["handoff-0001", "handoff-0002", "handoff-0001-tampered"].map { dir in
            (dir, joined([try file(dir + "/manifest.txt"), try file(dir + "/rows.csv"), try file(dir + "/consistency.txt")]))
        }
        // Received into team B's ledger: the same packages.
        seeds["handoff-receive"] = seeds["handoff-package"]?.filter { !$0.0.hasSuffix("-tampered") }
        let accounts = try CSVTable(path: demo + "/handoff-0001/rows.csv").rows.prefix(20).compactMap { $0["account_id"] }
        seeds["apply-inputs"] = [
            (
                "demo-mapping",
                joined([
                    text(accounts.joined(separator: "\n") + "\n"), text("accounts"), text("account_id=id"), text("recipient_sub=apple_sub"),
                    text("provider = 'apple'"),
                ])
            ),
            (
                "quoted-names",
                joined([text("acct-1\r\n\n  acct-2  \n"), text("my \"accounts\""), text("account_id=a\"id"), text("recipient_sub=sub"), []])
            ),
        ]
        seeds["handoff-receipt"] = try ["receipt-0001", "receipt-0002"].map { dir in
            (
                dir,
                joined([
                    try file(dir + "/cosigned-checkpoint.txt"), try file(dir + "/handoff-received.json"),
                    try file(dir + "/handoff-received.tlog-proof"),
                ])
            )
        }
        seeds["checkpoint-note"] = try [
            "sender-checkpoint.txt", "handoff-0001/manifest.txt", "handoff-0002/consistency.txt", "receipt-0001/cosigned-checkpoint.txt",
            "bundle-one/checkpoint",
        ].map { ($0.replacingOccurrences(of: "/", with: "-"), try file($0)) }
        let proofs = try files("bundle-one/proofs").prefix(3).map { "bundle-one/proofs/" + $0 } + ["receipt-0001/handoff-received.tlog-proof"]
        seeds["tlog-proof"] = try proofs.map { ($0.replacingOccurrences(of: "/", with: "-"), try file($0)) }
        seeds["verifier-key"] = try ["sender.pub", "recipient.pub", "bundle-one/verifier-key"].map {
            ($0.replacingOccurrences(of: "/", with: "-"), try file($0))
        }

        func side(_ dir: String) throws -> (checkpoint: [UInt8], manifest: [UInt8], events: [[UInt8]]) {
            (try file(dir + "/checkpoint"), try file(dir + "/manifest.json"), try files(dir + "/events").map { try file(dir + "/events/" + $0) })
        }
        let one = try side("bundle-one")
        seeds["evidence-bundle"] = [("bundle-one", joined([one.checkpoint, one.manifest] + one.events.prefix(10)))]
        let sender = try side("bundle-two/sender")
        let recipient = try side("bundle-two/recipient")
        let package = try files("bundle-two/handoff").first ?? "1"
        seeds["two-sided-bundle"] = [
            (
                "bundle-two",
                joined(
                    [
                        try file("bundle-two/manifest.json"), sender.checkpoint, sender.manifest, recipient.checkpoint, recipient.manifest,
                        try file("bundle-two/handoff/\(package)/manifest.txt"),
                        (try? file("bundle-two/handoff/\(package)/cosigned-checkpoint.txt")) ?? [],
                    ]
                        + sender.events.prefix(8) + [text("recipient")] + recipient.events.prefix(8))
            )
        ]
        seeds["event-json"] = try eventsOfEveryType(in: [
            FuzzWorkspace.copy(fixture: "sender", as: "seeds-sender"), FuzzWorkspace.copy(fixture: "recipient", as: "seeds-recipient"),
        ])

        seeds["stored-record"] = (0..<24).map { i in
            let entry = UInt16(truncatingIfNeeded: i &* 97)
            let mode: UInt8 = [0, 1, 2, 3, 0x80, 4, 8][i % 7]
            return ("entry-\(i)", [UInt8(entry >> 8), UInt8(entry & 0xFF), mode] + text(i % 2 == 0 ? "\u{1}\u{2}\u{3}" : "{\"seq\":1}"))
        }

        let now: Int64 = 1_790_000_000
        let signIn =
            "{\"aud\":\"com.example.notes\",\"auth_time\":\(now),\"email\":\"a@privaterelay.appleid.com\",\"email_verified\":\"true\",\"exp\":\(now + 600),"
            + "\"iat\":\(now),\"is_private_email\":\"true\",\"iss\":\"https://appleid.apple.com\",\"nonce_supported\":false,\"real_user_status\":2,"
            + "\"sub\":\"001234.abcdef0123456789.0001\",\"transfer_sub\":\"t.0001\"}"
        let events =
            "{\\\"type\\\":\\\"email-disabled\\\",\\\"sub\\\":\\\"001234.abcdef0123456789.0001\\\",\\\"email\\\":\\\"a@privaterelay.appleid.com\\\",\\\"is_private_email\\\":\\\"true\\\",\\\"event_time\\\":\(now)000}"
        let notification =
            "{\"aud\":\"com.example.notes\",\"events\":\"\(events)\",\"iat\":\(now),\"iss\":\"https://appleid.apple.com\",\"jti\":\"0b6b3c5e-jti\"}"
        seeds["signed-claims"] = [
            ("sign-in", joined([text(signIn), [], text("\(now + 1)")])), ("notification", joined([text(notification), [], text("\(now + 1)")])),
        ]
        let minter = ServeFixture.minter
        let token = try blocking {
            try await minter.identityToken(
                audience: "com.example.notes", sub: "001234.abcdef0123456789.0001", transferSub: "t.0001", email: "a@privaterelay.appleid.com",
                isPrivateEmail: true, issuedAt: now)
        }
        let delivery = try blocking {
            try await minter.notification(
                audience: "com.example.notes", type: "consent-revoked", sub: "001234.abcdef0123456789.0001", eventTime: now, jti: "seed-jti")
        }
        seeds["ingest-token"] = [
            ("bare-token", text(token)), ("report", text("{\"identity_token\":\"\(token)\",\"nonce\":\"n-1\"}")), ("notification", text(delivery)),
        ]
        let bearer = text("Authorization: Bearer \(ServeFixture.secret)\nContent-Type: application/json")
        seeds["serve-request"] = [
            ("sign-in", joined([text("POST /apple/sign-ins"), bearer, text("{\"identity_token\":\"\(token)\"}")])),
            ("sign-in-unauthorized", joined([text("POST /apple/sign-ins"), [], text(token)])),
            ("notification", joined([text("POST /apple/notifications"), text("Content-Type: application/json"), text(delivery)])),
            ("healthz", joined([text("GET /healthz"), [], []])), ("metrics", joined([text("GET /metrics"), [], []])),
            ("lookup-transfer-sub", joined([text("GET /v1/transfer-subs/t.0001"), bearer, []])),
            ("lookup-sub", joined([text("GET /v1/subs/001234.abcdef0123456789.0001"), bearer, []])),
            ("lookup-unauthorized", joined([text("GET /v1/subs/001234.abcdef0123456789.0001"), [], []])),
        ]
        seeds["apple-answer"] = [
            (
                "token",
                joined([
                    text("200 token"), text("Content-Type: application/json"),
                    text("{\"access_token\":\"a1b2c3\",\"token_type\":\"Bearer\",\"expires_in\":3600}"),
                ])
            ),
            ("transfer-sub", joined([text("200 migration"), [], text("{\"transfer_sub\":\"t.0001\"}")])),
            (
                "exchanged",
                joined([
                    text("200 migration"), [],
                    text("{\"sub\":\"001234.abc.0001\",\"email\":\"a@privaterelay.appleid.com\",\"is_private_email\":\"true\"}"),
                ])
            ),
            ("throttled", joined([text("429 migration"), text("Retry-After: 120"), []])),
            (
                "invalid-request",
                joined([text("400 migration"), [], text("{\"error\":\"invalid_request\",\"error_description\":\"bad transfer_sub\"}")])
            ),
            ("invalid-client", joined([text("400 token"), [], text("{\"error\":\"invalid_client\"}")])),
            ("outage", joined([text("503 migration"), text("Retry-After: Wed, 25 Nov 2026 10:00:00 GMT"), text("<html>down</html>")])),
        ]
        seeds["key-set"] = [("stand-in", text(try minter.jwks()))]
        seeds["tile-path"] = [
            ("full", text("tile/0/000")), ("partial", text("tile/1/x001/x234/067.p/12")), ("entries", text("tile/entries/x002/345.p/255")),
            ("checkpoint", text("checkpoint")),
        ]
        seeds.merge(
            try witnessSeeds(
                checkpoint: try file("sender-checkpoint.txt"), consistency: try file("handoff-0002/consistency.txt"),
                witnessKey: try CheckpointKey.load(from: demo + "/recipient"))
        ) { $1 }
        return seeds
    }

    /// The witness harnesses' seeds: the sender's checkpoint submitted first, a package's
    /// consistency file (a request from an older size), answers of a witness cosigning it with
    /// `witnessKey` (the recipient fixture's, as ``WitnessFixture`` expects), a witnesses file
    /// and a policy.
    static func witnessSeeds(checkpoint: [UInt8], consistency: [UInt8], witnessKey: CheckpointKey) throws -> [String: [(String, [UInt8])]] {
        let text = String(decoding: checkpoint, as: UTF8.self)
        let parsed = try Checkpoint(parsing: text)
        let name = "witness.fuzz/w1"
        let line = try Cosignature.sign(parsed, name: name, key: witnessKey, timestamp: 1_790_000_000).line
        let vkey = Cosignature.verifierKey(name: name, publicKey: witnessKey.publicKey)
        let other = Cosignature.verifierKey(name: "witness.example.org", publicKey: witnessKey.publicKey)
        return [
            "witness-request": [
                ("first-checkpoint", Array("old 0\n\n\(text)".utf8)), ("consistency-file", consistency),
                ("empty-tree", Array("old 0\n\n\(text.replacingOccurrences(of: "\n\(parsed.treeSize)\n", with: "\n0\n"))".utf8)),
            ],
            "witness-answer": [
                ("cosigned", [0, 1] + Array(line.utf8)), ("conflict", [1, 0] + Array("4215\n".utf8)),
                ("inconsistent", [2, 1] + Array("the consistency proof does not verify\n".utf8)),
            ],
            "witness-list": [("two", Array("https://witness.example.org/ \(other)\nhttp://127.0.0.1:8080/prefix \(vkey)\n".utf8))],
            "witness-policy": [
                ("one", Array("{\"quorum\":1,\"witnesses\":[\"\(vkey)\"]}\n".utf8)),
                ("card-form", Array("{\"witness_policy\":{\"quorum\":1,\"witnesses\":[\"\(vkey)\"]},\"max_checkpoint_age\":3600}".utf8)),
            ],
        ]
    }

    /// One event of each type found in the ledgers at `paths` (their JSON as stored).
    private static func eventsOfEveryType(in paths: [String]) throws -> [(String, [UInt8])] {
        var byType: [EventType: [UInt8]] = [:]
        for path in paths {
            let ledger = try Ledger.open(at: path, options: Ledger.Options(access: .readOnly))
            defer { ledger.close() }
            try ledger.read { view in
                for sequence in 1...max(1, try view.head().sequence) {
                    guard let event = try view.event(sequence), byType[event.type] == nil else { continue }
                    byType[event.type] = event.canonicalJSON
                }
            }
        }
        return byType.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key.rawValue, $0.value) }
    }
}
