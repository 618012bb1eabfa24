import ArgumentParser
import Basics
import Crypto
import Foundation
import Ledger
import LogEngine
import Projections

/// `handover-lab handoff-pair`: both teams' ledgers of a transfer of N users handed over in one
/// signed package, for `tools/bench --reconcile`.
///
/// Team A's ledger holds N "transfer ID generated" events, "handoff issued" and, at the end,
/// "handoff acknowledged"; team B's holds "handoff received" (with a real signed manifest) and N
/// "transfer ID exchanged". Both end with a signed checkpoint covering every event, so
/// two-sided evidence can be written of any user. Prints one JSON object.
struct HandoffPairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff-pair", abstract: "Write team A's and team B's ledgers of N users handed over in one signed package.")

    @Option var sender: String
    @Option var recipient: String
    @Option(help: "Users handed over.") var users: Int
    @Option(
        name: .customLong("rows-form"),
        help:
            "Also record the package's rows on team B's side and one apply run over every user, batches of 1,000: v2 (kept beside their events, salted, under row tree roots) or v1 (in the events' JSON, as before 0.5.0)."
    )
    var rowsForm: HandoffRowsForm?

    /// The `transfer_sub` of user `i`: a scrambled number, so byte order differs from append order.
    static func transferSub(_ i: Int) -> String {
        var x = UInt64(i) &+ 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return String(format: "%06x.%016llx", i % 0xFFFFFF, x ^ (x >> 31))
    }

    func run() async throws {
        let start = Date()
        var options = Ledger.Options()
        options.mapSize = 1 << 30
        let a = try await GeneratedSender.create(at: sender, users: users, clientID: "com.example.scale", ledgerID: "scale-sender", options: options)
        let b = try await Ledger.create(
            at: recipient, LedgerCreated(teamID: "BBBB222222", clientIDs: ["com.example.scale"], role: .recipient, ledgerID: "scale-recipient"),
            folders: [UserProjection()], options: options)
        defer {
            a.close()
            b.close()
        }
        let chunk = 4096
        // Team A signs and issues one package of them all (the rows file itself is not needed here).
        let aKey = try a.signingKey().key
        let checkpoint = try a.signCheckpoint(with: aKey)
        let rows = rowsForm.map { HandoffPairRows(users: users, form: $0, origin: checkpoint.origin) }
        let manifest = HandoffManifest(
            package: 1, senderTeam: "AAAA111111", clientIDs: ["com.example.scale"], targetTeam: "BBBB222222", rowCount: users,
            rowsSHA256: rows?.fileSHA256 ?? String(repeating: "0", count: 64), rowsRoot: rows?.root, previousTreeSize: 0,
            previousManifestSHA256: nil, issuedAt: .now(), checkpoint: checkpoint)
        let note = try SignedNote.signing(manifest.text, name: try a.origin(), key: aKey).serialized
        let digest = Hex.encode(SHA256.hash(data: Array(note.utf8)))
        _ = try await a.append(
            EventDraft(
                .handoffIssued(
                    HandoffIssued(
                        package: 1, targetTeam: "BBBB222222", rowCount: users, rowsSHA256: manifest.rowsSHA256,
                        manifestSHA256: digest, previousTreeSize: 0, checkpoint: CheckpointFields(checkpoint))),
                idempotencyKey: "handoff-issued:BBBB222222:1"))
        // Team B receives it and exchanges every user.
        let received = try await b.append(
            EventDraft(
                .handoffReceived(
                    HandoffReceived(
                        senderTeam: "AAAA111111", package: 1, rowCount: users, rowsSHA256: manifest.rowsSHA256, rowsRoot: manifest.rowsRoot,
                        manifestSHA256: digest, manifest: note, packagePath: "handoff-0001",
                        checkpoint: CheckpointFields(checkpoint))),
                idempotencyKey: "handoff-received:\(checkpoint.origin):1"))
        for drafts in rows?.received(manifestSHA256: digest) ?? [] { _ = try await b.append(contentsOf: drafts) }
        for first in stride(from: 0, to: users, by: chunk) {
            _ = try await b.append(
                contentsOf: (first..<min(first + chunk, users)).map { i in
                    let transferSub = Self.transferSub(i)
                    return EventDraft(
                        .transferIDExchanged(TransferIDExchanged(email: nil, isPrivateEmail: true)),
                        identifiers: Identifiers(accountID: "acct-\(i)", transferSub: transferSub, recipientSub: "001\(i).recipient"),
                        idempotencyKey: "exchange:" + transferSub)
                })
        }
        for drafts in rows?.applied() ?? [] { _ = try await b.append(contentsOf: drafts) }
        // Team B's receipt, confirmed by team A; both sign checkpoints covering everything.
        let bKey = try b.signingKey().key
        let bCheckpoint = try b.signCheckpoint(with: bKey)
        let now = Timestamp.now()
        let cosignature = try Cosignature.sign(checkpoint, name: try b.origin(), key: bKey, timestamp: UInt64(now.seconds))
        _ = try await a.append(
            EventDraft(
                .handoffAcknowledged(
                    HandoffAcknowledged(
                        package: 1, targetTeam: "BBBB222222", manifestSHA256: digest, recipientSequence: Int(received.sequence),
                        recipientCheckpoint: CheckpointFields(bCheckpoint),
                        cosignedAt: Timestamp(microseconds: now.seconds * 1_000_000),
                        cosignature: Data(cosignature.keyID + cosignature.bytes).base64EncodedString())),
                idempotencyKey: "handoff-acknowledged:" + digest))
        _ = try a.signCheckpoint(with: aKey)
        let seconds = Date().timeIntervalSince(start)
        print(#"{"users":\#(users),"seconds":\#(String(format: "%.1f", seconds)),"sample_account":"acct-\#(users / 2)"}"#)
    }
}
