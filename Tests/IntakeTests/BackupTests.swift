import AsyncHTTPClient
import Foundation
import Ledger
import NIOCore
import Synchronization
import TestSupport
import Testing

@Suite("handover backup under load", .serialized)
struct BackupTests {
    /// The last sequence of the ledger in `directory`.
    static func head(_ directory: String) throws -> UInt64 {
        let ledger = try Ledger.open(at: directory, options: .init(access: .readOnly))
        defer { ledger.close() }
        return try ledger.read { try $0.head().sequence }
    }

    @Test(
        "backup while another process appends 20,000 events and serve takes notifications: the copy verifies, reaches the head it started at, holds the original's bytes, proves a checkpoint signed before; so does a copy without keys"
    )
    func hotBackup() async throws {
        let dir = TemporaryDirectory()
        let (original, jwks) = try IntakeFixture.commandLineLedger(in: dir, name: "ledger")
        let withKeys = dir.sub("copy")
        let evidence = dir.sub("evidence")
        let serve = try ServerProcess(["serve", "--ledger", original, "--port", "0", "--jwks-file", jwks])
        let now = Int64(Date().timeIntervalSince1970)
        func post(_ http: HTTPClient, _ i: Int) async throws -> Bool {
            var request = HTTPClientRequest(url: serve.baseURL + "/apple/notifications")
            request.method = .POST
            let body = try await TestKeys.minter.notification(
                audience: IntakeFixture.clientID, type: "email-enabled", sub: "B.backup.\(i)",
                email: "b\(i)@privaterelay.appleid.com", eventTime: now, jti: "backup-\(i)")
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await http.execute(request, timeout: .seconds(60))
            _ = try await response.body.collect(upTo: 1 << 16)
            return response.status == .ok
        }
        // Some history, and a checkpoint signed before the backup.
        for i in 0..<20 { #expect(try await post(HTTPClient.shared, i)) }
        let checkpoint = dir.sub("checkpoint.txt")
        let signed = try runProduct("handover", ["checkpoint", "--ledger", original, "--out", checkpoint])
        #expect(signed.status == 0, "\(signed.err)")

        let appender = try RunningProduct("handover-lab", ["append", "--ledger", original, "--count", "20000", "--prefix", "bk", "--tasks", "16"])
        let stop = Atomic(false)
        let notifier = Task {
            var i = 20
            var acknowledged = 0
            while !stop.load(ordering: .relaxed) {
                if try await post(HTTPClient.shared, i) { acknowledged += 1 }
                i += 1
            }
            return acknowledged
        }
        // Both writers under way before the backups begin (the deadline only catches a hang).
        let underWay = ContinuousClock.now + .seconds(120)
        while try BackupTests.head(original) < 2_000, ContinuousClock.now < underWay { try await Task.sleep(for: .milliseconds(50)) }

        let headAtStart = try BackupTests.head(original)
        let backup = try runProduct("handover", ["backup", "--ledger", original, "--out", withKeys])
        #expect(backup.status == 0, "\(backup.err)")
        #expect(backup.out.contains("Backed up"), "\(backup.out)")
        let evidenceBackup = try runProduct("handover", ["backup", "--ledger", original, "--out", evidence, "--without-keys"])
        #expect(evidenceBackup.status == 0, "\(evidenceBackup.err)")
        // Whether the appender still ran by now depends on the machine's speed; serve's writer
        // runs until told to stop below, so the backups always ran beside a writer.
        // Checked before anything opens the copy.
        for name in ["keys/slots", "keys/data.mdb"] {
            let mode = try FileManager.default.attributesOfItem(atPath: withKeys + "/" + name)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(name) in the copy is readable by its owner only: \(String(mode ?? 0, radix: 8))")
        }
        #expect(!FileManager.default.fileExists(atPath: evidence + "/keys"), "an evidence-only copy has no key store")
        #expect(!FileManager.default.fileExists(atPath: evidence + "/checkpoint.key"), "an evidence-only copy has no signing key")
        #expect(
            FileManager.default.contents(atPath: evidence + "/checkpoint.pub") == FileManager.default.contents(atPath: original + "/checkpoint.pub"),
            "an evidence-only copy has the verifier key")
        let modes = try [original, withKeys].map {
            try FileManager.default.attributesOfItem(atPath: $0 + "/checkpoint.key")[.posixPermissions] as? Int
        }
        #expect(Set(modes).count == 1 && modes[0] == 0o600, "checkpoint.key keeps its mode: \(modes)")

        let appended = appender.wait()
        stop.store(true, ordering: .relaxed)
        let acknowledged = try await notifier.value
        #expect(appended.status == 0, "\(appended.err)")
        #expect(acknowledged > 0)
        let stopped = serve.finish()
        #expect(stopped.status == 0, "\(stopped.err)")

        let source = try Ledger.open(at: original, options: .init(access: .readOnly))
        defer { source.close() }
        for copy in [withKeys, evidence] {
            let verified = try runProduct("handover", ["verify", "--ledger", copy])
            #expect(verified.status == 0, "\(verified.err)")
            let audit = try runProduct("handover", ["verify", "--ledger", copy, "--checkpoint", checkpoint])
            #expect(audit.status == 0, "\(audit.out)\(audit.err)")
            let proof = try runProduct("handover", ["prove", "7", "--ledger", copy, "--checkpoint", checkpoint])
            #expect(proof.status == 0 && proof.out.contains("\"sequence\":7"), "\(proof.err)")
            let ledger = try Ledger.open(at: copy, options: .init(access: .readOnly))
            defer { ledger.close() }
            let head = try ledger.read { try $0.head() }
            #expect(head.sequence >= headAtStart, "the copy reaches \(head.sequence), the head was \(headAtStart) when the backup started")
            let different = try ledger.read { copied in
                try source.read { live in
                    try (1...head.sequence).filter { sequence in
                        let a = try copied.record(sequence).map { Array($0) }
                        let b = try live.record(sequence).map { Array($0) }
                        return a == nil || a != b
                    }
                }
            }
            #expect(different.isEmpty, "events that differ from the original: \(different.prefix(5))")
        }
        // Personal data opens in the full copy and never in the evidence-only one.
        let full = try runProduct("handover", ["query", "user", "B.backup.3", "--ledger", withKeys, "--format", "json"])
        #expect(full.out.contains("b3@privaterelay.appleid.com"), "\(full.out)")
        let sealed = try runProduct("handover", ["query", "user", "B.backup.3", "--ledger", evidence, "--format", "json"])
        #expect(sealed.status == 0 && !sealed.out.contains("b3@privaterelay.appleid.com") && sealed.out.contains("(sealed: no key)"), "\(sealed.out)")
    }
}
